/* What the two halves of numloom.core._speedups share: the array handle (_speedups.c) and the
 * traced operation (_tracing.c). */
#ifndef NUMLOOM_SPEEDUPS_H
#define NUMLOOM_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject_HEAD
    PyObject *storage;
    PyObject *readonly;
    PyObject *host;
    PyObject *view;
    PyObject *dtype;
    PyObject *identity;
} Handle;

extern PyTypeObject HandleType;

/* The handle's operators (``a + b``, ``-a``, ``a < b``), in C: _tracing.c. */
extern PyNumberMethods nl_handle_number;
PyObject *nl_handle_richcompare(PyObject *self, PyObject *other, int op);

/* The base class of numloom's ufuncs (their call in C): _tracing.c. */
extern PyTypeObject nl_ufunc_base;

/* ``a[mask]`` of computed CPU arrays, run now by NumPy (NULL with no error: not handled). */
PyObject *nl_compact(PyObject *self, PyObject *key);

/* The module functions _tracing.c adds (install_tracing, plain_call, structure). */
extern PyMethodDef nl_tracing_methods[];

/* ``storage.version``, ``node.arg`` or ``buffer.exports``: read at its slot where the object
 * is of numloom's exact class and tracing is installed, else by ``getattr``. A new reference,
 * or NULL with an error set. */
PyObject *nl_field(PyObject *o, int which);
enum { NL_VERSION, NL_ARG, NL_EXPORTS };

/* The weakly referenced object of ``ref``, borrowed (NULL if it is gone): only compared by
 * identity or used while the caller holds a reference that keeps it alive. */
static inline PyObject *nl_referent(PyObject *ref) {
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *obj = NULL;
    if (PyWeakref_GetRef(ref, &obj) <= 0) {
        PyErr_Clear();
        return NULL;
    }
    Py_DECREF(obj);
    return obj;
#else
    PyObject *obj = PyWeakref_GetObject(ref);
    return obj == Py_None ? NULL : obj;
#endif
}

#endif
