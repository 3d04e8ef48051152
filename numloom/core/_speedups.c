/* numloom.core._speedups: the array handle's element access in C.
 *
 * ``Handle`` is the base of ``numloom.ndarray``: it holds the handle's storage, read-only flag
 * and host view (``_storage``, ``_readonly``, ``_host``, as the pure-Python handle's slots do)
 * and implements ``a[i]`` and ``a[i] = v`` for a full integer index where the host view
 * (core/host.py: ``(weakref to the version, read-only NumPy view, writable view or None,
 * ndim)``) is current: the element is read from, or written into, NumPy's own array, as a
 * NumPy user's loop over elements does. Everything else (slices, masks, pending work, a
 * version someone else holds) calls the Python path (core/array.py's ``getitem_slow`` and
 * ``setitem_slow``), which also does all of this in pure Python
 * (``NUMLOOM_PURE_PYTHON=1``).
 *
 * The conditions are the Python path's, checked in the same order: a write goes in place only
 * while nothing but the storage holds its version and nothing but the version holds its buffer
 * (reference counts), the buffer is not exported, no function is being traced and the array
 * is writable.
 */
#include "_speedups.h"
#include <structmember.h>

/* What ``install`` hands over: the Python paths and the objects the fast paths look at. */
static PyObject *getitem_slow, *setitem_slow, *tracing, *scalars, *integers, *shape_setter;
/* host.py's quiet_store(key, ndim, value, dtype) and QUIET_MASKS ({dtype: which Python scalars
 * store into it with no warning}), or NULL */
static PyObject *quiet_store, *quiet_masks;

static int handle_traverse(Handle *self, visitproc visit, void *arg) {
    Py_VISIT(self->storage);
    Py_VISIT(self->readonly);
    Py_VISIT(self->host);
    Py_VISIT(self->view);
    Py_VISIT(self->dtype);
    Py_VISIT(self->identity);
    return 0;
}

static int handle_clear(Handle *self) {
    Py_CLEAR(self->storage);
    Py_CLEAR(self->readonly);
    Py_CLEAR(self->host);
    Py_CLEAR(self->view);
    Py_CLEAR(self->dtype);
    Py_CLEAR(self->identity);
    return 0;
}

static void handle_dealloc(Handle *self) {
    PyObject_GC_UnTrack(self);
    handle_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Whether ``key`` (an int or a tuple) indexes one element of an ``ndim``-d array: an int
 * for 1-d, a tuple of ``ndim`` ints or NumPy integers otherwise. */
static int one_element(PyObject *key, PyObject *ndim_obj) {
    long ndim = PyLong_AsLong(ndim_obj);
    if (ndim == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (PyLong_CheckExact(key))
        return ndim == 1;
    if (PyTuple_GET_SIZE(key) != ndim)
        return 0;
    for (Py_ssize_t i = 0; i < ndim; i++) {
        PyObject *k = PyTuple_GET_ITEM(key, i);
        if (PyLong_CheckExact(k))
            continue;
        int found = PySet_Contains(integers, (PyObject *)Py_TYPE(k));
        if (found <= 0) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* The host view tuple when it is current for the storage's version (a new reference to the
 * version in ``*version``), else NULL with no error set (or with one, returned as -1). */
static int current_host(Handle *self, PyObject **version) {
    PyObject *h = self->host;
    *version = NULL;
    if (h == NULL || !PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) < 4 || self->storage == NULL)
        return 0;
    PyObject *v = nl_field(self->storage, NL_VERSION);
    if (v == NULL)
        return -1;
    if (nl_referent(PyTuple_GET_ITEM(h, 0)) != v) {
        Py_DECREF(v);
        return 0;
    }
    *version = v;
    return 1;
}

static PyObject *slice_handle(Handle *self, PyObject *key);

static PyObject *view_cls; /* numloom's ndarray (install_views; defined with the views below) */
/* host.py's ``views_host``: a computed CPU array's host view tuple, made if missing, or None
 * (install_views; NULL: views take a current host view only) */
static PyObject *views_host;
/* Where numloom's ndarray holds its ``_base_array`` slot (install_views; 0: not found, the
 * attribute is then read and set by name). An array made without a base leaves the slot
 * empty: read by name, that raised and formatted an AttributeError for every view made. */
static Py_ssize_t base_offset;

/* ``h._base_array`` of a handle of numloom's ndarray class (new reference), None where unset;
 * NULL with an error set on failure. */
static PyObject *base_of(PyObject *h) {
    if (base_offset > 0 && Py_TYPE(h) == (PyTypeObject *)view_cls) {
        PyObject *base = *(PyObject **)((char *)h + base_offset);
        return Py_NewRef(base == NULL ? Py_None : base);
    }
    PyObject *base = PyObject_GetAttrString(h, "_base_array");
    if (base == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    return base;
}

/* base_of(a) from Python: ``a._base_array`` or None, with no AttributeError made and caught
 * for an array whose slot is empty (array.py's ``base``, ``share``). */
static PyObject *base_of_call(PyObject *module, PyObject *h) {
    return base_of(h);
}

/* ``h._base_array = base`` for a handle of numloom's ndarray class; -1 on failure. */
static int set_base(PyObject *h, PyObject *base) {
    if (base_offset > 0 && Py_TYPE(h) == (PyTypeObject *)view_cls) {
        Py_XSETREF(*(PyObject **)((char *)h + base_offset), Py_NewRef(base));
        return 0;
    }
    return PyObject_SetAttrString(h, "_base_array", base);
}

static PyObject *handle_subscript(Handle *self, PyObject *key) {
    PyTypeObject *t = Py_TYPE(key);
    if ((t == &PyLong_Type || t == &PyTuple_Type) && PyList_GET_SIZE(tracing) == 0) {
        PyObject *version;
        int current = current_host(self, &version);
        if (current < 0)
            return NULL;
        if (current) {
            Py_DECREF(version);
            PyObject *h = self->host;
            if (one_element(key, PyTuple_GET_ITEM(h, 3)))
                return PyObject_GetItem(PyTuple_GET_ITEM(h, 1), key);
        }
    }
    if ((t == &PyTuple_Type || t == &PySlice_Type || t == &PyLong_Type) &&
        (view_cls == NULL || Py_TYPE(self) == (PyTypeObject *)view_cls)) {
        /* (slices, and integers that leave axes (a loop's ``g[i]``): a view, made here; a
         * program's subclass's, in Python: of its class) */
        PyObject *made = slice_handle(self, key);
        if (made != NULL || PyErr_Occurred())
            return made;
    } else if (t == Py_TYPE(self) && PyList_GET_SIZE(tracing) == 0) { /* (a loop's ``z[keep]``) */
        PyObject *picked = nl_compact((PyObject *)self, key);
        if (picked != NULL || PyErr_Occurred())
            return picked;
    }
    return PyObject_CallFunctionObjArgs(getitem_slow, (PyObject *)self, key, NULL);
}

/* Whether ``a[key] = value`` with a tuple of integers and slices (``u[0, :] = 1``) is a store
 * NumPy makes with no warning (host.py's ``quiet_store``), given the host view tuple ``h``. */
static int quiet_slices(PyObject *key, PyObject *value, PyObject *h) {
    if (quiet_store == NULL || quiet_masks == NULL || !PyTuple_CheckExact(key))
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(key), ndim = PyLong_AsSsize_t(PyTuple_GET_ITEM(h, 3));
    if (ndim < 0) {
        PyErr_Clear();
        return 0;
    }
    if (n > ndim)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = PyTuple_GET_ITEM(key, i);
        if (!PyLong_CheckExact(k) && !PySlice_Check(k))
            return 0;
    }
    PyTypeObject *vt = Py_TYPE(value);
    if (vt == &PyBool_Type)
        return 1;
    PyObject *dtype = PyObject_GetAttrString(PyTuple_GET_ITEM(h, 2), "dtype");
    if (dtype == NULL) {
        PyErr_Clear();
        return 0;
    }
    int quiet = 0;
    if (vt == &PyLong_Type || vt == &PyFloat_Type || vt == &PyComplex_Type) {
        PyObject *m = PyDict_GetItemWithError(quiet_masks, dtype);
        long mask = m == NULL ? 0 : PyLong_AsLong(m);
        if (vt == &PyLong_Type)
            quiet = (mask & 1) != 0;
        else if (vt == &PyFloat_Type) {
            double x = PyFloat_AS_DOUBLE(value);
            quiet = (mask & 2) != 0 || ((mask & 4) != 0 && !(fabs(x) > 3.4028234663852886e38 &&
                                                            !isinf(x)));
        } else
            quiet = (mask & 8) != 0;
    } else { /* NumPy's scalars */
        PyObject *ndim_obj = PyTuple_GET_ITEM(h, 3);
        PyObject *r =
            PyObject_CallFunctionObjArgs(quiet_store, key, ndim_obj, value, dtype, NULL);
        quiet = r == Py_True;
        Py_XDECREF(r);
    }
    if (PyErr_Occurred())
        PyErr_Clear();
    Py_DECREF(dtype);
    return quiet;
}

/* Whether ``a[key] = value`` may go straight into the host view's writable array. */
static int writes_in_place(Handle *self, PyObject *key, PyObject *value) {
    PyTypeObject *t = Py_TYPE(key);
    if (!(t == &PyLong_Type || t == &PyTuple_Type))
        return 0;
    if (PySet_Contains(scalars, (PyObject *)Py_TYPE(value)) != 1) {
        PyErr_Clear();
        return 0;
    }
    PyObject *h = self->host;
    if (h == NULL || !PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) < 4 ||
        PyTuple_GET_ITEM(h, 2) == Py_None)
        return 0;
    PyObject *version;
    int current = current_host(self, &version);
    if (current <= 0)
        return current;
    /* nothing but the storage (and this function) holds the version */
    int alone = Py_REFCNT(version) <= 2;
    int ok = 0;
    if (alone) {
        PyObject *arg = nl_field(version, NL_ARG);
        if (arg == NULL) {
            Py_DECREF(version);
            return -1;
        }
        /* the version (and this function) holds the buffer; a device's host mirror also
         * needs the buffer to still be of the class the view was made for (host.py's
         * ``_set_device_element``: its writes are still to be copied to the device) */
        if (Py_REFCNT(arg) <= 2 &&
            (PyTuple_GET_SIZE(h) < 5 || (PyObject *)Py_TYPE(arg) == PyTuple_GET_ITEM(h, 4))) {
            PyObject *exports = nl_field(arg, NL_EXPORTS);
            if (exports == NULL) {
                Py_DECREF(arg);
                Py_DECREF(version);
                return -1;
            }
            int exported = PyObject_IsTrue(exports);
            Py_DECREF(exports);
            int readonly = self->readonly == NULL ? 1 : PyObject_IsTrue(self->readonly);
            ok = exported == 0 && PyList_GET_SIZE(tracing) == 0 && readonly == 0 &&
                 (one_element(key, PyTuple_GET_ITEM(h, 3)) || quiet_slices(key, value, h));
            if (exported < 0 || readonly < 0)
                PyErr_Clear();
        }
        Py_DECREF(arg);
    }
    Py_DECREF(version);
    return ok;
}

static int handle_ass_subscript(Handle *self, PyObject *key, PyObject *value) {
    if (value != NULL) {
        int fast = writes_in_place(self, key, value);
        if (fast < 0)
            return -1;
        if (fast)
            return PyObject_SetItem(PyTuple_GET_ITEM(self->host, 2), key, value);
    }
    /* (``del a[key]``: a third argument after the value says so) */
    PyObject *result =
        value == NULL
            ? PyObject_CallFunctionObjArgs(setitem_slow, (PyObject *)self, key, Py_None, Py_True,
                                           NULL)
            : PyObject_CallFunctionObjArgs(setitem_slow, (PyObject *)self, key, value, NULL);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

/* ``shape``, ``dtype`` and ``ndim``: read from the view (a tuple whose first field is the
 * shape) and the dtype slot; setting ``shape`` calls the Python setter. */
static PyObject *view_shape(Handle *self) {
    if (self->view == NULL || !PyTuple_Check(self->view) || PyTuple_GET_SIZE(self->view) < 1) {
        PyErr_SetString(PyExc_AttributeError, "the array has no view yet");
        return NULL;
    }
    return PyTuple_GET_ITEM(self->view, 0);
}

static PyObject *get_shape(Handle *self, void *closure) {
    PyObject *shape = view_shape(self);
    return shape == NULL ? NULL : Py_NewRef(shape);
}

/* ``a.<what> = value`` through the Python ``setter`` (array.py's), NumPy's error for ``del`` */
static int call_setter(PyObject *setter, Handle *self, PyObject *value, const char *what) {
    if (value == NULL) {
        PyErr_Format(PyExc_AttributeError, "Cannot delete array %s", what);
        return -1;
    }
    if (setter == NULL) {
        PyErr_Format(PyExc_AttributeError, "the array's %s cannot be set yet", what);
        return -1;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(setter, (PyObject *)self, value, NULL);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

static int set_shape(Handle *self, PyObject *value, void *closure) {
    return call_setter(shape_setter, self, value, "shape");
}

static PyObject *get_dtype(Handle *self, void *closure) {
    if (self->dtype == NULL) {
        PyErr_SetString(PyExc_AttributeError, "the array has no dtype yet");
        return NULL;
    }
    return Py_NewRef(self->dtype);
}

static PyObject *dtype_setter = NULL; /* array.py's _set_dtype */

static int set_dtype(Handle *self, PyObject *value, void *closure) {
    return call_setter(dtype_setter, self, value, "dtype");
}

static PyObject *install_dtype_setter(PyObject *module, PyObject *fn) {
    Py_XSETREF(dtype_setter, Py_NewRef(fn));
    Py_RETURN_NONE;
}

static PyObject *get_ndim(Handle *self, void *closure) {
    PyObject *shape = view_shape(self);
    return shape == NULL ? NULL : PyLong_FromSsize_t(PyObject_Length(shape));
}

static PyGetSetDef handle_getset[] = {
    {"shape", (getter)get_shape, (setter)set_shape, "Tuple of array dimensions.", NULL},
    {"dtype", (getter)get_dtype, (setter)set_dtype, "Data-type of the array's elements.", NULL},
    {"ndim", (getter)get_ndim, NULL, "Number of array dimensions.", NULL},
    {NULL},
};

static PyMappingMethods handle_mapping = {
    0,
    (binaryfunc)handle_subscript,
    (objobjargproc)handle_ass_subscript,
};

static PyMemberDef handle_members[] = {
    {"_storage", T_OBJECT_EX, offsetof(Handle, storage), 0, NULL},
    {"_readonly", T_OBJECT_EX, offsetof(Handle, readonly), 0, NULL},
    {"_host", T_OBJECT_EX, offsetof(Handle, host), 0, NULL},
    {"_view", T_OBJECT_EX, offsetof(Handle, view), 0, NULL},
    {"_dtype", T_OBJECT_EX, offsetof(Handle, dtype), 0, NULL},
    {"_identity", T_OBJECT_EX, offsetof(Handle, identity), 0, NULL},
    {NULL},
};

/* The buffer protocol (``memoryview(x)``, ``bytes(x)``, PIL's ``frombuffer``, Cython's
 * memoryviews): the buffer of ``x._buffer_host(writable)``, NumPy's view of the computed value
 * (host.py; on the CPU x's memory, so x's later writes reach it and its writes reach x; on a
 * GPU a host copy). The view holds x, and the NumPy array in ``internal``: at its release,
 * ``x._buffer_released(host, writable)`` copies a GPU array's writable copy back to the
 * device, as a write into it is a write into x. */
static int handle_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    int writable = (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE;
    PyObject *host = PyObject_CallMethod(self, "_buffer_host", "i", writable);
    if (host == NULL)
        return -1;
    if (PyObject_GetBuffer(host, view, flags) < 0) {
        Py_DECREF(host);
        return -1;
    }
    /* (NumPy defines no release of its own: the view's fields stay valid while host lives) */
    Py_DECREF(view->obj); /* (the reference GetBuffer took: host's own one stays, in internal) */
    view->internal = host;
    Py_INCREF(self);
    view->obj = self;
    return 0;
}

static void handle_releasebuffer(PyObject *self, Py_buffer *view) {
    PyObject *host = (PyObject *)view->internal;
    if (host == NULL)
        return;
    view->internal = NULL;
    if (!view->readonly) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *done = PyObject_CallMethod(self, "_buffer_released", "O", host);
        if (done == NULL)
            PyErr_WriteUnraisable(self);
        Py_XDECREF(done);
        PyErr_Restore(type, value, traceback);
    }
    Py_DECREF(host);
}

static PyBufferProcs handle_buffer = {
    .bf_getbuffer = handle_getbuffer,
    .bf_releasebuffer = handle_releasebuffer,
};

PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numloom.core._speedups.Handle",
    .tp_basicsize = sizeof(Handle),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The array handle's storage, flags and host view, and its element access in C.",
    .tp_traverse = (traverseproc)handle_traverse,
    .tp_clear = (inquiry)handle_clear,
    .tp_dealloc = (destructor)handle_dealloc,
    .tp_as_mapping = &handle_mapping,
    .tp_as_number = &nl_handle_number,
    .tp_as_buffer = &handle_buffer,
    .tp_richcompare = nl_handle_richcompare,
    .tp_members = handle_members,
    .tp_getset = handle_getset,
    .tp_new = PyType_GenericNew,
};

static PyObject *install(PyObject *module, PyObject *args) {
    PyObject *get, *set, *trace, *sc, *ints, *shape_set;
    PyObject *quiet = NULL, *masks = NULL;
    if (!PyArg_ParseTuple(args, "OOO!OOO|OO!:install", &get, &set, &PyList_Type, &trace, &sc,
                          &ints, &shape_set, &quiet, &PyDict_Type, &masks))
        return NULL;
    if (!PyAnySet_Check(sc) || !PyAnySet_Check(ints)) {
        PyErr_SetString(PyExc_TypeError, "install: scalars and integers are sets of types");
        return NULL;
    }
    Py_INCREF(get);
    Py_INCREF(set);
    Py_INCREF(trace);
    Py_INCREF(sc);
    Py_INCREF(ints);
    Py_INCREF(shape_set);
    Py_XSETREF(shape_setter, shape_set);
    Py_XSETREF(getitem_slow, get);
    Py_XSETREF(setitem_slow, set);
    Py_XSETREF(tracing, trace);
    Py_XSETREF(scalars, sc);
    Py_XSETREF(integers, ints);
    Py_XINCREF(quiet);
    Py_XSETREF(quiet_store, quiet);
    Py_XINCREF(masks);
    Py_XSETREF(quiet_masks, masks);
    Py_RETURN_NONE;
}

/* A View (a tuple subclass: shape, strides, offset) of these fields; steals ``start``. */
/* ``untracked``: a view (shape, strides, offset) and a host view's tuple (a weak reference
 * with no callback, NumPy's array, None, an int) can be part of no reference cycle, so they
 * are taken out of the garbage collector's lists as they are made, as CPython does for tuples
 * of such items at its next collection. A loop that keeps a computed array's rows (a decision
 * tree's ``[s for s in X if s[j] >= t]``) made three tracked objects a row, and the collections
 * they set off cost more than the rows themselves (0.66 against 0.17 us a row). */
static PyObject *make_view(PyTypeObject *view_type, PyObject *shape, PyObject *strides,
                           PyObject *start) {
    PyObject *view;
#if PY_VERSION_HEX < 0x030E0000
    /* a tuple subclass's instance, filled in place (from 3.14 on a tuple caches its hash in a
     * field that a zero-filled allocation would get wrong) */
    if (PyType_IsSubtype(view_type, &PyTuple_Type) && view_type->tp_itemsize == sizeof(PyObject *)) {
        view = view_type->tp_alloc(view_type, 3);
        if (view == NULL) {
            Py_DECREF(start);
            return NULL;
        }
        PyTuple_SET_ITEM(view, 0, Py_NewRef(shape));
        PyTuple_SET_ITEM(view, 1, Py_NewRef(strides));
        PyTuple_SET_ITEM(view, 2, start);
        PyObject_GC_UnTrack(view); /* (ints alone, no cycle through it: see ``untracked``) */
        return view;
    }
#endif
    PyObject *fields = PyTuple_Pack(3, shape, strides, start);
    Py_DECREF(start);
    if (fields == NULL)
        return NULL;
    PyObject *call = PyTuple_Pack(1, fields);
    Py_DECREF(fields);
    if (call == NULL)
        return NULL;
    view = PyTuple_Type.tp_new(view_type, call, NULL); /* (tuple.__new__(View, ...)) */
    Py_DECREF(call);
    return view;
}

/* ``out``'s host view: the tuple (ref, host, None, ndim) of a weak reference to the version
 * and NumPy's view of its elements, out of the garbage collector's lists (``untracked``);
 * -1 on failure. Borrows its arguments. */
static int give_host(Handle *out, PyObject *ref, PyObject *host, PyObject *ndim) {
    PyObject *held = PyTuple_Pack(4, ref, host, Py_None, ndim);
    if (held == NULL)
        return -1;
    PyObject_GC_UnTrack(held);
    Py_SETREF(out->host, held);
    return 0;
}


/* row(parts, i): row ``i`` of an array of two or more axes, a new handle of class ``cls`` on
 * the same storage, from ``parts`` = (cls, storage, readonly, dtype, identity, View, shape,
 * strides, offset, step[, base[, ref, host, ndim]]) (core/host.py's ``_rows``, one row at a
 * time). With ``ref`` (a weak reference to a computed CPU array's version), ``host`` (that
 * array's host view) and ``ndim`` (a row's), the row's host view is ``host[i]``, ready: a decision tree's
 * ``[s for s in X if s[j] >= t]`` reads each row's elements from it. */
static PyObject *row(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "row(parts, i) takes a tuple and an int");
        return NULL;
    }
    PyObject *parts = args[0];
    Py_ssize_t i = PyLong_AsSsize_t(args[1]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t nparts = PyTuple_GET_SIZE(parts);
    if (nparts < 10 || nparts > 14 || nparts == 12 || nparts == 13 ||
        !PyType_Check(PyTuple_GET_ITEM(parts, 0)) ||
        !PyType_Check(PyTuple_GET_ITEM(parts, 5))) {
        PyErr_SetString(PyExc_TypeError, "row: parts are (cls, storage, readonly, dtype, "
                                         "identity, View, shape, strides, offset, step[, base"
                                         "[, ref, host, ndim]])");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(parts, 0);
    if (!PyType_IsSubtype(cls, &HandleType)) {
        PyErr_SetString(PyExc_TypeError, "row: the class is not a numloom handle");
        return NULL;
    }
    Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(parts, 8));
    Py_ssize_t step = PyLong_AsSsize_t(PyTuple_GET_ITEM(parts, 9));
    if ((offset == -1 || step == -1) && PyErr_Occurred())
        return NULL;
    PyObject *start = PyLong_FromSsize_t(offset + i * step);
    if (start == NULL)
        return NULL;
    PyObject *view = make_view((PyTypeObject *)PyTuple_GET_ITEM(parts, 5),
                               PyTuple_GET_ITEM(parts, 6), PyTuple_GET_ITEM(parts, 7), start);
    if (view == NULL)
        return NULL;
    Handle *out = (Handle *)cls->tp_alloc(cls, 0);
    if (out == NULL) {
        Py_DECREF(view);
        return NULL;
    }
    out->view = view;
    out->storage = Py_NewRef(PyTuple_GET_ITEM(parts, 1));
    out->readonly = Py_NewRef(PyTuple_GET_ITEM(parts, 2));
    out->dtype = Py_NewRef(PyTuple_GET_ITEM(parts, 3));
    out->identity = Py_NewRef(PyTuple_GET_ITEM(parts, 4));
    out->host = Py_NewRef(Py_None);
    if (PyTuple_GET_SIZE(parts) > 10) { /* the array whose memory the row is: its ``base`` */
        if (set_base((PyObject *)out, PyTuple_GET_ITEM(parts, 10)) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    if (nparts == 14) { /* the row's host view: (ref, host[i], None, ndim) */
        PyObject *hrow = PySequence_GetItem(PyTuple_GET_ITEM(parts, 12), i);
        if (hrow == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        int failed = give_host(out, PyTuple_GET_ITEM(parts, 11), hrow, PyTuple_GET_ITEM(parts, 13));
        Py_DECREF(hrow);
        if (failed < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return (PyObject *)out;
}

/* What the basic-slicing fast path needs (``install_views``): numloom's ndarray class, the
 * View class, views.py's ``_WARN_ON_WRITE`` (arrays whose first write warns: while it holds
 * any, slicing takes the Python path) and host.py's ``_is_identity``. */
static PyObject *view_cls, *view_type, *warn_on_write, *is_identity;

#define NL_MAX_DIMS 64

/* ``a[key]`` for a key of slices with positive steps and integers (one trailing Ellipsis
 * allowed), at least one slice, none empty: a new handle on a's storage, as array_views.py's
 * ``basic_view`` makes it. NULL with no error set where the Python path must take it (NumPy's
 * errors, other keys, subclasses). */
static PyObject *slice_handle(Handle *self, PyObject *key) {
    if (view_cls == NULL || Py_TYPE(self) != (PyTypeObject *)view_cls ||
        PyDict_GET_SIZE(warn_on_write) != 0)
        return NULL;
    PyObject *view = self->view;
    if (view == NULL || !PyTuple_Check(view) || PyTuple_GET_SIZE(view) != 3 ||
        self->storage == NULL || self->dtype == NULL || self->readonly == NULL)
        return NULL;
    PyObject *shape = PyTuple_GET_ITEM(view, 0), *strides = PyTuple_GET_ITEM(view, 1);
    if (!PyTuple_Check(shape) || !PyTuple_Check(strides))
        return NULL;
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(view, 2));
    if (offset == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *one[1] = {key};
    PyObject **items = one;
    Py_ssize_t n = 1;
    if (PyTuple_CheckExact(key)) {
        items = &PyTuple_GET_ITEM(key, 0);
        n = PyTuple_GET_SIZE(key);
    } else if (!PySlice_Check(key) && !PyLong_CheckExact(key))
        return NULL;
    if (n > 0 && items[n - 1] == Py_Ellipsis)
        n--;
    if (n > ndim || ndim > NL_MAX_DIMS)
        return NULL;
    Py_ssize_t new_shape[NL_MAX_DIMS], new_strides[NL_MAX_DIMS];
    int m = 0, sliced = 0;
    for (Py_ssize_t d = 0; d < ndim; d++) {
        Py_ssize_t len = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
        Py_ssize_t stride = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, d));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (d >= n) {
            new_shape[m] = len;
            new_strides[m++] = stride;
            continue;
        }
        PyObject *k = items[d];
        if (PySlice_Check(k)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) {
                PyErr_Clear();
                return NULL;
            }
            if (step <= 0)
                return NULL; /* (reversed views: the Python path) */
            Py_ssize_t count = PySlice_AdjustIndices(len, &start, &stop, step);
            if (count <= 0)
                return NULL; /* (an empty view: the Python path, NumPy's offset) */
            new_shape[m] = count;
            new_strides[m++] = stride * step;
            offset += start * stride;
            sliced = 1;
        } else if (PyLong_CheckExact(k)) {
            Py_ssize_t i = PyLong_AsSsize_t(k);
            if (i == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return NULL;
            }
            if (i < 0)
                i += len;
            if (i < 0 || i >= len)
                return NULL; /* (NumPy's IndexError: the Python path) */
            offset += i * stride;
        } else
            return NULL;
    }
    if (!sliced && m == 0)
        return NULL; /* (an element: NumPy's scalar, read on the host) */
    PyObject *shape_t = PyTuple_New(m), *strides_t = PyTuple_New(m);
    if (shape_t == NULL || strides_t == NULL) {
        Py_XDECREF(shape_t);
        Py_XDECREF(strides_t);
        return NULL;
    }
    for (int d = 0; d < m; d++) {
        PyObject *a = PyLong_FromSsize_t(new_shape[d]), *b = PyLong_FromSsize_t(new_strides[d]);
        if (a == NULL || b == NULL) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            Py_DECREF(shape_t);
            Py_DECREF(strides_t);
            return NULL;
        }
        PyTuple_SET_ITEM(shape_t, d, a);
        PyTuple_SET_ITEM(strides_t, d, b);
    }
    PyObject *start = PyLong_FromSsize_t(offset);
    PyObject *new_view = start == NULL ? NULL : make_view((PyTypeObject *)view_type, shape_t,
                                                          strides_t, start);
    Py_DECREF(shape_t);
    Py_DECREF(strides_t);
    if (new_view == NULL)
        return NULL;
    PyObject *identity;
    if (offset != 0)
        identity = Py_NewRef(Py_False);
    else {
        identity = PyObject_CallFunctionObjArgs(is_identity, self->storage, new_view,
                                                self->dtype, NULL);
        if (identity == NULL) {
            Py_DECREF(new_view);
            return NULL;
        }
    }
    PyTypeObject *cls = (PyTypeObject *)view_cls;
    Handle *out = (Handle *)cls->tp_alloc(cls, 0);
    if (out == NULL) {
        Py_DECREF(new_view);
        Py_DECREF(identity);
        return NULL;
    }
    out->view = new_view;
    out->storage = Py_NewRef(self->storage);
    out->readonly = Py_NewRef(self->readonly);
    out->dtype = Py_NewRef(self->dtype);
    out->identity = identity;
    out->host = Py_NewRef(Py_None);
    /* where a's host view is current, the view's is NumPy's view of it (the same version's
     * memory): a loop's eager calls on ``pn[1:-1, 2:]`` read it at once (api/eager.py); a
     * computed CPU array's is made for it first (``views_host``: a grid's cells in a loop) */
    PyObject *version, *h = NULL;
    int current = current_host(self, &version);
    if (current < 0) {
        Py_DECREF(out);
        return NULL;
    }
    if (current) {
        Py_DECREF(version);
        h = Py_NewRef(self->host);
    } else if (views_host != NULL) {
        h = PyObject_CallOneArg(views_host, (PyObject *)self);
        if (h == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        if (h == Py_None || !PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) < 4)
            Py_CLEAR(h);
    }
    if (h != NULL) {
        PyObject *host = PyObject_GetItem(PyTuple_GET_ITEM(h, 1), key);
        PyObject *ndim = host == NULL ? NULL : PyLong_FromLong(m);
        int failed = ndim == NULL ? -1 : give_host(out, PyTuple_GET_ITEM(h, 0), host, ndim);
        Py_XDECREF(host);
        Py_XDECREF(ndim);
        Py_DECREF(h);
        if (failed < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    /* its ``base``: the array whose memory it is (a's own base, else a) */
    PyObject *base = base_of((PyObject *)self);
    if (base == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    if (base == Py_None)
        Py_SETREF(base, Py_NewRef((PyObject *)self));
    int failed = set_base((PyObject *)out, base);
    Py_DECREF(base);
    if (failed < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)out;
}

/* slice_view(a, key): ``slice_handle`` from Python (array_views.py's ``basic_view``), None
 * where it does not apply. */
static PyObject *slice_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyObject_TypeCheck(args[0], &HandleType)) {
        PyErr_SetString(PyExc_TypeError, "slice_view(a, key) takes a numloom array and a key");
        return NULL;
    }
    PyObject *made = slice_handle((Handle *)args[0], args[1]);
    if (made == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return made;
}

static PyObject *install_views(PyObject *module, PyObject *args) {
    PyObject *cls, *vt, *warns, *ident, *hosts = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!O|O:install_views", &PyType_Type, &cls, &PyType_Type, &vt,
                          &PyDict_Type, &warns, &ident, &hosts))
        return NULL;
    Py_XSETREF(views_host, hosts == Py_None ? NULL : Py_XNewRef(hosts));
    Py_XSETREF(view_cls, Py_NewRef(cls));
    Py_XSETREF(view_type, Py_NewRef(vt));
    Py_XSETREF(warn_on_write, Py_NewRef(warns));
    Py_XSETREF(is_identity, Py_NewRef(ident));
    base_offset = 0;
    PyObject *slot = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, "_base_array");
    if (slot != NULL && Py_IS_TYPE(slot, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)slot)->d_member;
        if (member->type == T_OBJECT_EX)
            base_offset = member->offset;
    }
    Py_RETURN_NONE;
}

static PyObject *s_numpy_name;

/* The runner's ``__import__`` (tools/runner.py): ``import numpy...`` goes to its Python hook,
 * every other import straight to the original ``__import__``, with no Python frame between the
 * importing code and the import (a warning a module gives as it is imported, with a
 * ``stacklevel`` that names its importer, then names the user's line, as under plain Python). */
static PyObject *import_original, *import_hook;

static PyObject *redirect_import(PyObject *module, PyObject *args, PyObject *kwargs) {
    if (import_original == NULL || import_hook == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "redirect_import: install_import was not called");
        return NULL;
    }
    PyObject *name = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0)
                     : kwargs != NULL ? PyDict_GetItemString(kwargs, "name") : NULL;
    int numpy = 0;
    if (name != NULL && PyUnicode_Check(name)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(name);
        if (PyUnicode_Tailmatch(name, s_numpy_name, 0, 5, -1) == 1 &&
            (n == 5 || PyUnicode_READ_CHAR(name, 5) == '.'))
            numpy = 1;
    }
    return PyObject_Call(numpy ? import_hook : import_original, args, kwargs);
}

static PyObject *install_import(PyObject *module, PyObject *args) {
    PyObject *original, *hook;
    if (!PyArg_ParseTuple(args, "OO:install_import", &original, &hook))
        return NULL;
    if (s_numpy_name == NULL && (s_numpy_name = PyUnicode_InternFromString("numpy")) == NULL)
        return NULL;
    Py_XSETREF(import_original, Py_NewRef(original));
    Py_XSETREF(import_hook, Py_NewRef(hook));
    Py_RETURN_NONE;
}

/* --- a library's entry point handed NumPy arrays (api/libraries.py) ----------------------------
 * ArgsWrapper(fn, convert[, kinds]): calling it calls convert(args, kwargs) -> (args, kwargs),
 * then fn with those; with kinds (a type or a tuple of types), convert only where an argument is
 * an instance of one, else fn at once. It is C, so no Python frame of numloom's stands between the user's and fn's: a
 * library's warnings.warn(..., stacklevel=k) still points at the user's line. As a class
 * attribute it binds like a function (a method of the library's class). */

typedef struct {
    PyObject_HEAD
    PyObject *fn;
    PyObject *convert;
    PyObject *kinds; /* convert is called only where an argument is one of these (NULL: always) */
    PyObject *dict;
    PyObject *lookup; /* pickling: lookup(module, qualname) finds the wrapper again (or NULL) */
    vectorcallfunc vectorcall;
} ArgsWrapper;

/* 1 where one of the arguments is an instance of w->kinds, 0 where none is, -1 on error */
static int args_wrapper_needs(ArgsWrapper *w, PyObject *args, PyObject *kwargs) {
    if (w->kinds == NULL)
        return 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        int found = PyObject_IsInstance(PyTuple_GET_ITEM(args, i), w->kinds);
        if (found != 0)
            return found;
    }
    if (kwargs != NULL) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &key, &value)) {
            int found = PyObject_IsInstance(value, w->kinds);
            if (found != 0)
                return found;
        }
    }
    return 0;
}

/* fn called with convert(args, kwargs) */
static PyObject *args_wrapper_converted(ArgsWrapper *w, PyObject *args, PyObject *kwargs) {
    PyObject *converted = PyObject_CallFunctionObjArgs(w->convert, args,
                                                       kwargs ? kwargs : Py_None, NULL);
    if (converted == NULL)
        return NULL;
    if (!PyTuple_Check(converted) || PyTuple_GET_SIZE(converted) != 2 ||
        !PyTuple_Check(PyTuple_GET_ITEM(converted, 0))) {
        Py_DECREF(converted);
        PyErr_SetString(PyExc_TypeError, "ArgsWrapper: convert must return (tuple, dict)");
        return NULL;
    }
    PyObject *new_kwargs = PyTuple_GET_ITEM(converted, 1);
    PyObject *out = PyObject_Call(w->fn, PyTuple_GET_ITEM(converted, 0),
                                  new_kwargs == Py_None ? NULL : new_kwargs);
    Py_DECREF(converted);
    return out;
}

static PyObject *args_wrapper_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    ArgsWrapper *w = (ArgsWrapper *)self;
    int needs = args_wrapper_needs(w, args, kwargs);
    if (needs < 0)
        return NULL;
    if (needs == 0)
        return PyObject_Call(w->fn, args, kwargs);
    return args_wrapper_converted(w, args, kwargs);
}

/* The call without a tuple of the arguments: where nothing needs converting, fn gets them as
 * they came, so it sees the reference counts a direct call gives (pandas' __setitem__ judges
 * a chained assignment by its frame's count). */
static PyObject *args_wrapper_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                         PyObject *kwnames) {
    ArgsWrapper *w = (ArgsWrapper *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    int needs = w->kinds == NULL;
    for (Py_ssize_t i = 0; !needs && i < nargs + nkw; i++) {
        needs = PyObject_IsInstance(args[i], w->kinds);
        if (needs < 0)
            return NULL;
    }
    if (!needs)
        return PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    PyObject *kwargs = NULL;
    if (nkw) {
        kwargs = PyDict_New();
        for (Py_ssize_t j = 0; kwargs != NULL && j < nkw; j++) {
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, j), args[nargs + j]) < 0)
                Py_CLEAR(kwargs);
        }
        if (kwargs == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
    }
    PyObject *out = args_wrapper_converted(w, tuple, kwargs);
    Py_DECREF(tuple);
    Py_XDECREF(kwargs);
    return out;
}

static PyObject *args_wrapper_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *fn, *convert, *kinds = NULL, *lookup = NULL;
    if (!PyArg_ParseTuple(args, "OO|OO:ArgsWrapper", &fn, &convert, &kinds, &lookup))
        return NULL;
    ArgsWrapper *w = (ArgsWrapper *)type->tp_alloc(type, 0);
    if (w == NULL)
        return NULL;
    w->fn = Py_NewRef(fn);
    w->convert = Py_NewRef(convert);
    w->kinds = kinds == Py_None ? NULL : Py_XNewRef(kinds);
    w->lookup = lookup == Py_None ? NULL : Py_XNewRef(lookup);
    w->dict = NULL;
    w->vectorcall = args_wrapper_vectorcall;
    return (PyObject *)w;
}

/* It prints as the function it wraps, and pickles as a reference to where it lives
 * (``lookup(module, qualname)``), as that function did. */
static PyObject *args_wrapper_repr(PyObject *self) {
    return PyObject_Repr(((ArgsWrapper *)self)->fn);
}

static PyObject *args_wrapper_reduce(PyObject *self, PyObject *unused) {
    ArgsWrapper *w = (ArgsWrapper *)self;
    if (w->lookup == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot pickle this ArgsWrapper");
        return NULL;
    }
    PyObject *module = PyObject_GetAttrString(self, "__module__");
    PyObject *qualname = module ? PyObject_GetAttrString(self, "__qualname__") : NULL;
    PyObject *out = qualname ? Py_BuildValue("O(OO)", w->lookup, module, qualname) : NULL;
    Py_XDECREF(module);
    Py_XDECREF(qualname);
    return out;
}

static PyMethodDef args_wrapper_methods[] = {
    {"__reduce__", args_wrapper_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static int args_wrapper_traverse(PyObject *self, visitproc visit, void *arg) {
    ArgsWrapper *w = (ArgsWrapper *)self;
    Py_VISIT(w->fn);
    Py_VISIT(w->convert);
    Py_VISIT(w->kinds);
    Py_VISIT(w->dict);
    Py_VISIT(w->lookup);
    return 0;
}

static int args_wrapper_clear(PyObject *self) {
    ArgsWrapper *w = (ArgsWrapper *)self;
    Py_CLEAR(w->fn);
    Py_CLEAR(w->convert);
    Py_CLEAR(w->kinds);
    Py_CLEAR(w->dict);
    Py_CLEAR(w->lookup);
    return 0;
}

static void args_wrapper_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    args_wrapper_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *args_wrapper_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyGetSetDef args_wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject ArgsWrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numloom.core._speedups.ArgsWrapper",
    .tp_basicsize = sizeof(ArgsWrapper),
    /* (METHOD_DESCRIPTOR: as a class's attribute it is called with the instance first, no
     * bound method between, as a function is) */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "ArgsWrapper(fn, convert[, kinds[, lookup]]): fn called with convert(args, kwargs) "
              "where an argument is of kinds, no frame between.",
    .tp_new = args_wrapper_new,
    .tp_call = args_wrapper_call,
    .tp_vectorcall_offset = offsetof(ArgsWrapper, vectorcall),
    .tp_repr = args_wrapper_repr,
    .tp_methods = args_wrapper_methods,
    .tp_descr_get = args_wrapper_get,
    .tp_traverse = args_wrapper_traverse,
    .tp_clear = args_wrapper_clear,
    .tp_dealloc = args_wrapper_dealloc,
    .tp_dictoffset = offsetof(ArgsWrapper, dict),
    .tp_getset = args_wrapper_getset,
};

/* Whether a storage's device is the CPU (its ``device`` attribute is "cpu"): -1 on error. */
static int on_cpu(PyObject *storage) {
    PyObject *device = PyObject_GetAttrString(storage, "device");
    if (device == NULL)
        return -1;
    int cpu = PyUnicode_Check(device) && PyUnicode_CompareWithASCIIString(device, "cpu") == 0;
    Py_DECREF(device);
    return cpu;
}

/* hosts(parts): the host views of a list of numloom CPU arrays, each current for its
 * storage's version (a loop's rows: ``np.array([s for s in X if ...])``, creation.py's
 * ``_parts_now``), as a new list; None where any part is not a handle, is not on the CPU (a
 * GPU array's host view is a mirror) or has no current host view. */
static PyObject *hosts(PyObject *module, PyObject *parts) {
    if (!PyList_Check(parts)) {
        PyErr_SetString(PyExc_TypeError, "hosts(parts) takes a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(parts);
    PyObject *out = PyList_New(n), *last = NULL;
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PyList_GET_ITEM(parts, i);
        PyObject *version;
        int current = PyObject_TypeCheck(p, &HandleType) ? current_host((Handle *)p, &version) : 0;
        if (current <= 0) {
            Py_DECREF(out);
            if (current < 0)
                return NULL;
            Py_RETURN_NONE;
        }
        Py_DECREF(version);
        PyObject *storage = ((Handle *)p)->storage;
        if (storage != last) { /* (rows of one array share its storage: asked once) */
            int cpu = on_cpu(storage);
            if (cpu <= 0) {
                Py_DECREF(out);
                if (cpu < 0)
                    return NULL;
                Py_RETURN_NONE;
            }
            last = storage;
        }
        PyObject *host = PyTuple_GET_ITEM(((Handle *)p)->host, 1);
        Py_INCREF(host);
        PyList_SET_ITEM(out, i, host);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"row", (PyCFunction)(void (*)(void))row, METH_FASTCALL, "row(parts, i): row i of an array, a new handle (host.py)."},
    {"hosts", (PyCFunction)hosts, METH_O,
     "hosts(parts): the current host views of a list of arrays, None where one has none."},
    {"base_of", (PyCFunction)base_of_call, METH_O, "base_of(a): a handle's _base_array, None where unset (array.py)."},
    {"slice_view", (PyCFunction)(void (*)(void))slice_view, METH_FASTCALL,
     "slice_view(a, key): a[key] for slices and integers, a new handle; None where the Python "
     "path takes it (array_views.py)."},
    {"install_views", install_views, METH_VARARGS,
     "install_views(ndarray, View, warn_on_write, is_identity[, views_host]): what slice_view looks at."},
    {"redirect_import", (PyCFunction)(void (*)(void))redirect_import,
     METH_VARARGS | METH_KEYWORDS,
     "redirect_import(name, globals=None, locals=None, fromlist=(), level=0): the runner's "
     "__import__ (install_import)."},
    {"install_import", install_import, METH_VARARGS,
     "install_import(original, hook): the __import__ redirect_import calls, and the hook it "
     "calls for numpy and its submodules."},
    {"install", install, METH_VARARGS,
     "install(getitem_slow, setitem_slow, tracing, scalars, integers, shape_setter[, quiet_store, quiet_masks]): the "
     "Python paths and the objects the fast paths look at."},
    {"install_dtype_setter", install_dtype_setter, METH_O,
     "install_dtype_setter(fn): what ``a.dtype = value`` calls, fn(a, value)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "numloom.core._speedups", "numloom's array handle in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    if (PyType_Ready(&HandleType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddFunctions(m, nl_tracing_methods) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyType_Ready(&nl_ufunc_base) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&nl_ufunc_base);
    if (PyModule_AddObject(m, "UfuncBase", (PyObject *)&nl_ufunc_base) < 0) {
        Py_DECREF(&nl_ufunc_base);
        Py_DECREF(m);
        return NULL;
    }
    if (PyType_Ready(&ArgsWrapperType) < 0 ||
        PyModule_AddObject(m, "ArgsWrapper", Py_NewRef((PyObject *)&ArgsWrapperType)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&HandleType);
    if (PyModule_AddObject(m, "Handle", (PyObject *)&HandleType) < 0) {
        Py_DECREF(&HandleType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
