/* numloom.core._speedups, the tracing half: a traced elementwise operation, and the walk of a
 * DAG at a sync, in C.
 *
 * ``a * b``, ``np.exp(a)``: every traced operation of a user's program comes through
 * ``plain``, which does what api/ufuncs.py's ``_plain_call`` does in Python, for the common
 * case of one or two operands that are whole arrays or Python scalars:
 *
 *   - the loop of this ufunc on these operand types, from ``_plain_loops`` (the Python path
 *     resolves a new combination once and caches it there);
 *   - each operand's node: a whole array's current version, or a Python scalar's broadcast
 *     constant from ``_scalars``;
 *   - the interned MAP node (core/dag.py's ``_intern``: the same keys in the same dicts, so
 *     nodes made here and in Python are one set);
 *   - NumPy's error state and the user's line, for an operation that can set an error flag
 *     (fperrors.record);
 *   - the result: a new Storage registered as pending (realize.register) and a handle on it
 *     (array.result).
 *
 * Anything else (broadcasting, a view, a scalar whose value matters, a first call) returns
 * "not handled" and the Python path runs, which stays the reference and runs everything when
 * ``NUMLOOM_PURE_PYTHON=1``.
 *
 * numloom's classes (Node, Storage, _Plain) are Python classes with ``__slots__``: their
 * fields are read and written here at the offsets of their slot descriptors, found by name
 * when ``install_tracing`` is called, so both paths make the same objects.
 */
#include "_speedups.h"
#include <structmember.h>
#include <stdint.h>

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

/* Set a slot of a freshly allocated object (it holds NULL) or replace its value. */
static inline void slot_set(PyObject *o, Py_ssize_t off, PyObject *value) {
    PyObject *old = SLOT(o, off);
    SLOT(o, off) = value;
    Py_XDECREF(old);
}

static int installed;
static PyTypeObject *NodeType, *StorageType, *PlainType, *ArrayType, *ScalarType, *BufferType;
static PyTypeObject *PooledType; /* realize.PooledBuffer: a Buffer of a pool's memory */
#define IS_BUFFER(o) (Py_IS_TYPE(o, BufferType) || Py_IS_TYPE(o, PooledType))
static Py_ssize_t off_bdata, off_bdevice, off_brelease, off_bexports;
static PyObject *op_buffer, *buffer_id, *cpu_name, *bool_dtype, *s_view, *s_flags, *s_writeable,
    *s_setflags;
static PyObject *merge_calls; /* fperrors.merge */
static PyObject *eager_scalars; /* the scalars a call run now takes as they are (api/eager.py) */
static PyObject *dispatch_modules, *users_call_py; /* (api/eager.py's users_call) */
static PyTypeObject *np_ndarray; /* numpy.ndarray */
static PyObject *s_size, *s_dtype, *s_kind, *s_host_view, *s_shape;
static PyObject *tracing_list, *eager_default, *eager_calling, *eager_caught, *eager_warn, *eager_adopted;
static PyObject *s_kinds, *s_c_contiguous, *s_owndata, *s_base, *out_kwnames;
static PyObject *warnings_module, *s_filters;
static Py_ssize_t eager_elements;
static Py_ssize_t off_op, off_srcs, off_arg, off_shape, off_dtype, off_depth, off_where,
    off_fallible, off_sid, off_call;
static Py_ssize_t off_version, off_device, off_error, off_seq, off_mirror, off_eager;
static Py_ssize_t off_loop, off_check, off_slow, off_names, off_raising, off_bounds;
static PyObject *sids, *interned, *dag_sweep, *op_map, *map_id, *sid_counter;
static PyObject *plain_loops, *scalar_keys, *scalars_cache, *as_loop_node_py, *plain_call_py;
static PyObject *seq_counter, *pending_refs, *pending_sweep;
static PyObject *register_limits, *config_module, *extobj_var, *user_line_py, *whole_py;
static PyObject *binary_py, *compare_py, *package, *views, *lines, *host_scalars, *eager_py, *eager_into_py;
static PyObject *s_EAGER_ELEMENTS, *s_FLUSH_DEPTH, *s_FLUSH_WIDTH, *s_name, *s_nin, *s_nout, *s_python_call, *s_np;
static unsigned long inserts, adds;

/* The operators' ufuncs (numloom.add, ...), by the slot that calls them. */
enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_AND, OP_OR, OP_XOR, OP_LSHIFT,
    OP_RSHIFT, OP_NEG, OP_POS, OP_ABS, OP_INVERT, OP_LT, OP_LE, OP_EQ, OP_NE, OP_GT, OP_GE,
    OP_COUNT
};
static const char *op_names[OP_COUNT] = {
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "negative", "positive",
    "absolute", "invert", "less", "less_equal", "equal", "not_equal", "greater",
    "greater_equal",
};
static PyObject *op_ufuncs[OP_COUNT];

#define NOT_HANDLED NULL /* (with no error set: the Python path runs) */

/* --- installing ---------------------------------------------------------------------------- */

static int slot_offset(PyTypeObject *t, const char *name, Py_ssize_t *off) {
    PyObject *d = PyObject_GetAttrString((PyObject *)t, name);
    if (d == NULL)
        return -1;
    int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
    if (ok)
        *off = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "install_tracing: %s.%s is not a __slots__ field",
                     t->tp_name, name);
        return -1;
    }
    return 0;
}

/* ``objects[name]``, a new reference stored in ``*into`` (its old value released). */
static int take(PyObject *objects, const char *name, PyObject **into) {
    PyObject *o = PyDict_GetItemString(objects, name);
    if (o == NULL) {
        PyErr_Format(PyExc_KeyError, "install_tracing: %s is missing", name);
        return -1;
    }
    Py_INCREF(o);
    Py_XSETREF(*into, o);
    return 0;
}

static int take_type(PyObject *objects, const char *name, PyTypeObject **into) {
    PyObject *o = NULL;
    if (take(objects, name, &o) < 0)
        return -1;
    if (!PyType_Check(o)) {
        Py_DECREF(o);
        PyErr_Format(PyExc_TypeError, "install_tracing: %s is not a class", name);
        return -1;
    }
    Py_XSETREF(*into, (PyTypeObject *)o);
    return 0;
}

/* install_tracing(objects): the dicts, classes and Python paths the traced operation uses,
 * by name (core/array.py's ``_install_tracing`` lists them). */
static PyObject *install_tracing(PyObject *module, PyObject *objects) {
    if (!PyDict_Check(objects)) {
        PyErr_SetString(PyExc_TypeError, "install_tracing takes a dict");
        return NULL;
    }
    if (take_type(objects, "Node", &NodeType) < 0 || take_type(objects, "Storage", &StorageType) < 0 ||
        take_type(objects, "Plain", &PlainType) < 0 || take_type(objects, "ndarray", &ArrayType) < 0 ||
        take_type(objects, "Scalar", &ScalarType) < 0 || take_type(objects, "Buffer", &BufferType) < 0 ||
        take_type(objects, "PooledBuffer", &PooledType) < 0 ||
        take_type(objects, "numpy_ndarray", &np_ndarray) < 0)
        return NULL;
    if (!PyType_IsSubtype(ArrayType, &HandleType) || !PyType_IsSubtype(ScalarType, &HandleType)) {
        PyErr_SetString(PyExc_TypeError, "install_tracing: the array classes are not handles");
        return NULL;
    }
    struct {
        PyTypeObject *t;
        const char *name;
        Py_ssize_t *off;
    } fields[] = {
        {NodeType, "op", &off_op},           {NodeType, "srcs", &off_srcs},
        {NodeType, "arg", &off_arg},         {NodeType, "shape", &off_shape},
        {NodeType, "dtype", &off_dtype},     {NodeType, "depth", &off_depth},
        {NodeType, "where", &off_where},     {NodeType, "fallible", &off_fallible},
        {NodeType, "sid", &off_sid},         {NodeType, "call", &off_call},
        {StorageType, "version", &off_version}, {StorageType, "device", &off_device},
        {StorageType, "error", &off_error},  {StorageType, "seq", &off_seq},
        {StorageType, "mirror", &off_mirror}, {StorageType, "eager", &off_eager},
        {PlainType, "loop", &off_loop},
        {PlainType, "check", &off_check},    {PlainType, "slow", &off_slow},
        {PlainType, "names", &off_names},    {PlainType, "raising", &off_raising},
        {PlainType, "bounds", &off_bounds},
        {BufferType, "data", &off_bdata},    {BufferType, "device", &off_bdevice},
        {BufferType, "release", &off_brelease}, {BufferType, "exports", &off_bexports},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (slot_offset(fields[i].t, fields[i].name, fields[i].off) < 0)
            return NULL;
    struct {
        const char *name;
        PyObject **into;
    } named[] = {
        {"sids", &sids},
        {"interned", &interned},
        {"dag_sweep", &dag_sweep},
        {"MAP", &op_map},
        {"MAP_ID", &map_id},
        {"sid_counter", &sid_counter},
        {"plain_loops", &plain_loops},
        {"scalar_keys", &scalar_keys},
        {"scalars", &scalars_cache},
        {"as_loop_node", &as_loop_node_py},
        {"plain_call", &plain_call_py},
        {"seq", &seq_counter},
        {"pending_refs", &pending_refs},
        {"pending_sweep", &pending_sweep},
        {"register_limits", &register_limits},
        {"config", &config_module},
        {"extobj", &extobj_var},
        {"user_line", &user_line_py},
        {"whole", &whole_py},
        {"binary", &binary_py},
        {"compare", &compare_py},
        {"package", &package},
        {"host_scalars", &host_scalars},
        {"eager", &eager_py},
        {"eager_into", &eager_into_py},
        {"BUFFER", &op_buffer},
        {"BUFFER_ID", &buffer_id},
        {"cpu", &cpu_name},
        {"bool", &bool_dtype},
        {"tracing", &tracing_list},
        {"eager_default", &eager_default},
        {"eager_calling", &eager_calling},
        {"eager_caught", &eager_caught},
        {"eager_warn", &eager_warn},
        {"eager_adopted", &eager_adopted},
        {"warnings", &warnings_module},
        {"merge_calls", &merge_calls},
        {"eager_scalars", &eager_scalars},
        {"dispatch_modules", &dispatch_modules},
        {"users_call", &users_call_py},
    };
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        if (take(objects, named[i].name, named[i].into) < 0)
            return NULL;
    if (!PyDict_Check(sids) || !PyDict_Check(interned) || !PyDict_Check(plain_loops) ||
        !PyDict_Check(scalar_keys) || !PyDict_Check(scalars_cache) || !PyDict_Check(pending_refs) ||
        !PyUnicode_Check(package) || !PyContextVar_CheckExact(extobj_var) ||
        !PyAnySet_Check(host_scalars) || !PyAnySet_Check(eager_scalars) || !PyAnySet_Check(dispatch_modules) ||
        !PyModule_Check(config_module)) {
        PyErr_SetString(PyExc_TypeError, "install_tracing: an object is not of its kind");
        return NULL;
    }
    PyObject *limit = PyDict_GetItemString(objects, "eager_elements");
    if (limit == NULL || !PyLong_Check(limit) || !PyList_Check(tracing_list)) {
        PyErr_SetString(PyExc_TypeError, "install_tracing: eager_elements or tracing is missing");
        return NULL;
    }
    eager_elements = PyLong_AsSsize_t(limit);
    PyObject *ufuncs = PyDict_GetItemString(objects, "ufuncs");
    if (ufuncs == NULL || !PyDict_Check(ufuncs)) {
        PyErr_SetString(PyExc_KeyError, "install_tracing: ufuncs (name -> ufunc) is missing");
        return NULL;
    }
    for (int i = 0; i < OP_COUNT; i++) {
        PyObject *uf = PyDict_GetItemString(ufuncs, op_names[i]);
        if (uf == NULL) {
            PyErr_Format(PyExc_KeyError, "install_tracing: ufunc %s is missing", op_names[i]);
            return NULL;
        }
        Py_INCREF(uf);
        Py_XSETREF(op_ufuncs[i], uf);
    }
    if (views == NULL && (views = PyDict_New()) == NULL)
        return NULL;
    if (lines == NULL && (lines = PyDict_New()) == NULL)
        return NULL;
    if (s_FLUSH_DEPTH == NULL) {
        s_FLUSH_DEPTH = PyUnicode_InternFromString("FLUSH_DEPTH");
        s_EAGER_ELEMENTS = PyUnicode_InternFromString("EAGER_ELEMENTS");
        s_FLUSH_WIDTH = PyUnicode_InternFromString("FLUSH_WIDTH");
        s_name = PyUnicode_InternFromString("__name__");
        s_nin = PyUnicode_InternFromString("nin");
        s_nout = PyUnicode_InternFromString("nout");
        s_python_call = PyUnicode_InternFromString("_python_call");
        s_np = PyUnicode_InternFromString("_np");
        s_size = PyUnicode_InternFromString("size");
        s_dtype = PyUnicode_InternFromString("dtype");
        s_shape = PyUnicode_InternFromString("shape");
        s_kind = PyUnicode_InternFromString("kind");
        s_host_view = PyUnicode_InternFromString("_host_view");
        s_filters = PyUnicode_InternFromString("filters");
        s_base = PyUnicode_InternFromString("base");
        out_kwnames = Py_BuildValue("(s)", "out");
        if (!s_base || !out_kwnames)
            return NULL;
        s_kinds = PyUnicode_InternFromString("kinds");
        s_c_contiguous = PyUnicode_InternFromString("c_contiguous");
        s_owndata = PyUnicode_InternFromString("owndata");
        if (!s_kinds || !s_c_contiguous || !s_owndata)
            return NULL;
        s_view = PyUnicode_InternFromString("view");
        s_flags = PyUnicode_InternFromString("flags");
        s_writeable = PyUnicode_InternFromString("writeable");
        s_setflags = PyUnicode_InternFromString("setflags");
        if (!s_view || !s_flags || !s_writeable || !s_setflags)
            return NULL;
        if (!s_FLUSH_DEPTH || !s_EAGER_ELEMENTS || !s_FLUSH_WIDTH || !s_name || !s_nin || !s_nout || !s_python_call || !s_np ||
            !s_size || !s_dtype || !s_kind || !s_host_view || !s_shape)
            return NULL;
    }
    installed = 1;
    Py_RETURN_NONE;
}

/* --- the user's line ----------------------------------------------------------------------- */

/* The users' lines last found, by code object and instruction (each entry holds its code). */
#define LINE_MEMO 256
typedef struct {
    PyCodeObject *code;
    int lasti;
    PyObject *where;
} LineMemo;
static LineMemo line_memo[LINE_MEMO];

#if PY_VERSION_HEX >= 0x030B0000
/* The module name of frame ``f``'s code (a new reference), or NULL (an error may be set). */
static PyObject *frame_module(PyFrameObject *f) {
    PyObject *globals = PyFrame_GetGlobals(f);
    PyObject *name = globals == NULL ? NULL : PyDict_GetItemWithError(globals, s_name);
    Py_XINCREF(name);
    Py_XDECREF(globals);
    return name;
}

/* Whether module name ``name`` is numloom's. */
static int numloom_module(PyObject *name) {
    return name != NULL && PyUnicode_Check(name) &&
           PyUnicode_Tailmatch(name, package, 0, PY_SSIZE_T_MAX, -1) == 1;
}
#endif

/* (file, line) of the first Python frame outside numloom (dag.user_line), or None. */
static PyObject *user_line(void) {
#if PY_VERSION_HEX >= 0x030B0000
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f != NULL) {
        PyObject *name = frame_module(f);
        int ours = numloom_module(name);
        Py_XDECREF(name);
        if (PyErr_Occurred()) {
            Py_DECREF(f);
            return NULL;
        }
        if (!ours)
            break;
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    if (f == NULL)
        Py_RETURN_NONE;
    /* (file, line) by the code and instruction: a line number is found by scanning the code's
     * line table, which costs more than the rest of a traced operation */
    PyCodeObject *code = PyFrame_GetCode(f);
    int lasti = PyFrame_GetLasti(f);
    LineMemo *m = &line_memo[(((uintptr_t)code >> 4) * 31u + (unsigned)lasti) & (LINE_MEMO - 1)];
    if (m->code == code && m->lasti == lasti) { /* (a loop's line: found by the instruction) */
        Py_DECREF(code);
        Py_DECREF(f);
        return Py_NewRef(m->where);
    }
    PyObject *key = Py_BuildValue("(Ni)", PyLong_FromVoidPtr(code), lasti);
    PyObject *where = NULL;
    if (key != NULL) {
        PyObject *known = PyDict_GetItemWithError(lines, key);
        if (known != NULL && PyTuple_GET_ITEM(known, 0) == (PyObject *)code) {
            where = Py_NewRef(PyTuple_GET_ITEM(known, 1));
        } else if (!PyErr_Occurred()) {
            where = Py_BuildValue("(Oi)", code->co_filename, PyFrame_GetLineNumber(f));
            PyObject *entry = where == NULL ? NULL : PyTuple_Pack(2, (PyObject *)code, where);
            if (PyDict_GET_SIZE(lines) >= 4096)
                PyDict_Clear(lines);
            if (entry == NULL || PyDict_SetItem(lines, key, entry) < 0)
                Py_CLEAR(where);
            Py_XDECREF(entry);
        }
        Py_DECREF(key);
    }
    if (where != NULL) {
        LineMemo old = *m;
        m->code = (PyCodeObject *)Py_NewRef((PyObject *)code);
        m->lasti = lasti;
        m->where = Py_NewRef(where);
        Py_XDECREF((PyObject *)old.code);
        Py_XDECREF(old.where);
    }
    Py_DECREF(code);
    Py_DECREF(f);
    return where;
#else
    return PyObject_CallNoArgs(user_line_py);
#endif
}

/* Whether the call being made is a program's: its nearest Python frame past numloom's operator
 * and ufunc dispatch (dispatch_modules) is not numloom's own (api/eager.py's ``users_call``);
 * -1 on an error. */
static int called_by_user(void) {
#if PY_VERSION_HEX >= 0x030B0000
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f != NULL) {
        PyObject *name = frame_module(f);
        int dispatch = name == NULL ? 0 : PySet_Contains(dispatch_modules, name);
        int ours = numloom_module(name);
        Py_XDECREF(name);
        if (dispatch < 0 || PyErr_Occurred()) {
            Py_DECREF(f);
            return -1;
        }
        if (!dispatch) {
            Py_DECREF(f);
            return !ours;
        }
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    return 1;
#else
    PyObject *r = PyObject_CallNoArgs(users_call_py);
    int user = r == NULL ? -1 : PyObject_IsTrue(r);
    Py_XDECREF(r);
    return user;
#endif
}

/* --- nodes ----------------------------------------------------------------------------------- */

/* ``table[key] = weak reference to obj``; every ``mask + 1`` entries ``sweep()`` drops those
 * of dead objects. -1 on error. */
static int remember(PyObject *table, PyObject *key, PyObject *obj, unsigned long *entries,
                    unsigned long mask, PyObject *sweep) {
    PyObject *wr = PyWeakref_NewRef(obj, NULL);
    int failed = wr == NULL || PyDict_SetItem(table, key, wr) < 0;
    Py_XDECREF(wr);
    if (failed)
        return -1;
    if ((++*entries & mask) == 0) {
        PyObject *r = PyObject_CallNoArgs(sweep);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* --- small caches of the traced operation, by the identity of their keys ------------------------
 * A program's loop traces the same calls again and again, with the same objects: its ufuncs,
 * dtypes, shape tuples (a result takes its operand's) and constants (a code object's). Each
 * entry holds references to its keys and values, so an address names its object while the
 * entry lasts; a miss takes the dictionaries, whose answers the entry then keeps. */

#define MEMO_BITS 9
#define MEMO_SIZE (1 << MEMO_BITS)

typedef struct {
    PyObject *k[4];
    PyObject *v;
} Memo;

static Memo plain_memo[MEMO_SIZE]; /* (ufunc, operand keys) -> its _Plain entry */
static Memo scalar_memo[MEMO_SIZE]; /* (dtype, shape, type, value) -> the broadcast constant */
static Memo sid_memo[MEMO_SIZE]; /* (MAP name, dtype, shape) -> the structure number */
static Memo view_memo[MEMO_SIZE]; /* (shape) -> its whole view */

static inline Memo *memo_at(Memo *table, PyObject *a, PyObject *b, PyObject *c, PyObject *d) {
    uint64_t h = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)(uintptr_t)b * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)(uintptr_t)c * 0x165667B19E3779F9ull ^
                 (uint64_t)(uintptr_t)d * 0x27D4EB2F165667C5ull;
    return &table[h >> (64 - MEMO_BITS)];
}

/* The value kept for keys ``a, b, c, d`` (borrowed), or NULL. */
static inline PyObject *memo_get(Memo *table, PyObject *a, PyObject *b, PyObject *c,
                                 PyObject *d) {
    Memo *m = memo_at(table, a, b, c, d);
    return m->v != NULL && m->k[0] == a && m->k[1] == b && m->k[2] == c && m->k[3] == d ? m->v
                                                                                         : NULL;
}

static void memo_put(Memo *table, PyObject *a, PyObject *b, PyObject *c, PyObject *d,
                     PyObject *v) {
    Memo *m = memo_at(table, a, b, c, d);
    Memo old = *m;
    PyObject *keys[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        m->k[i] = Py_XNewRef(keys[i]);
    m->v = Py_NewRef(v);
    for (int i = 0; i < 4; i++) /* (after the entry is whole: a finalizer may trace) */
        Py_XDECREF(old.k[i]);
    Py_XDECREF(old.v);
}

static void memo_clear(Memo *table) {
    for (int j = 0; j < MEMO_SIZE; j++) {
        Memo old = table[j];
        table[j] = (Memo){{NULL, NULL, NULL, NULL}, NULL};
        for (int i = 0; i < 4; i++)
            Py_XDECREF(old.k[i]);
        Py_XDECREF(old.v);
    }
}

/* The last adopted array's dtype and shape, with their BUFFER structure number and whole view
 * (``adopt``): a loop's arrays adopted in turn are mostly of one shape, whose number and view
 * are then found with no dictionary lookup of a tuple holding a dtype. ``last_dtype`` is
 * borrowed: only NumPy's own descriptors of its builtin types (``is_builtin_dtype``) are
 * remembered, so that no reference of a dtype changes hands here (NumPy's tests count them). */
static PyObject *last_dtype, *last_shape, *last_sid, *last_view;

/* NumPy's own descriptors of its builtin types (``np.dtype('d')``, ...), found once: the only
 * dtypes ``adopt`` remembers (NumPy never frees them). */
static PyObject *builtin_dtypes[32];
static int builtin_count = -1;

static int is_builtin_dtype(PyObject *dtype) {
    if (builtin_count < 0) {
        builtin_count = 0;
        PyObject *numpy = PyImport_ImportModule("numpy");
        PyObject *make = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "dtype");
        Py_XDECREF(numpy);
        if (make == NULL) {
            PyErr_Clear();
            return 0;
        }
        const char *codes = "?bhilqpBHILQPefdgFDG";
        for (const char *c = codes; *c && builtin_count < 32; c++) {
            PyObject *d = PyObject_CallFunction(make, "s#", c, (Py_ssize_t)1);
            if (d == NULL) {
                PyErr_Clear();
                continue;
            }
            builtin_dtypes[builtin_count++] = d; /* (kept: a reference for the process) */
        }
        Py_DECREF(make);
    }
    for (int i = 0; i < builtin_count; i++)
        if (builtin_dtypes[i] == dtype)
            return 1;
    return 0;
}

static void forget_last_buffer(void) {
    last_dtype = NULL;
    Py_CLEAR(last_shape);
    Py_CLEAR(last_sid);
    Py_CLEAR(last_view);
}

/* Whether tuples of ints ``a`` and ``b`` hold the same values. */
static int same_ints(PyObject *a, PyObject *b) {
    Py_ssize_t n = PyTuple_GET_SIZE(a);
    if (n != PyTuple_GET_SIZE(b))
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(a, i), *y = PyTuple_GET_ITEM(b, i);
        if (x != y && (!PyLong_CheckExact(x) || !PyLong_CheckExact(y) ||
                       PyLong_AsSsize_t(x) != PyLong_AsSsize_t(y)))
            return 0;
    }
    return 1;
}

/* The structure number of ``skey`` (dag._intern's ``_sids``: a new number for a new key), a
 * new reference. */
static PyObject *structure_number(PyObject *skey) {
    PyObject *sid = PyDict_GetItemWithError(sids, skey);
    if (sid != NULL)
        return Py_NewRef(sid);
    if (PyErr_Occurred())
        return NULL;
    if (PyDict_GET_SIZE(sids) >= (1 << 17)) {
        PyDict_Clear(sids); /* old plans then miss once: their keys name retired numbers */
        memo_clear(sid_memo);
        forget_last_buffer();
    }
    sid = PyIter_Next(sid_counter);
    if (sid == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "numloom: the structure counter ended");
        return NULL;
    }
    if (PyDict_SetItem(sids, skey, sid) < 0) {
        Py_DECREF(sid);
        return NULL;
    }
    return sid;
}

/* dag._intern: the interned node ``op(srcs; arg)`` of ``shape`` and ``dtype``, found by its
 * structure number (``skey``'s) with its sources' ids, or for a leaf ``arg_key``, if it is
 * alive; else made. ``where``: the user's line to blame for its data errors, or None. */
static PyObject *intern_numbered(PyObject *op, PyObject *srcs, PyObject *arg, PyObject *shape,
                                 PyObject *dtype, PyObject *where, PyObject *sid,
                                 PyObject *arg_key);

static PyObject *intern_node(PyObject *op, PyObject *srcs, PyObject *arg, PyObject *shape,
                             PyObject *dtype, PyObject *where, PyObject *skey, PyObject *arg_key) {
    PyObject *sid = structure_number(skey);
    if (sid == NULL)
        return NULL;
    return intern_numbered(op, srcs, arg, shape, dtype, where, sid, arg_key);
}

/* intern_node with the structure number ``sid`` (a reference it takes) already found. */
static PyObject *intern_numbered(PyObject *op, PyObject *srcs, PyObject *arg, PyObject *shape,
                                 PyObject *dtype, PyObject *where, PyObject *sid,
                                 PyObject *arg_key) {
    Py_ssize_t count = PyTuple_GET_SIZE(srcs);
    PyObject *key = PyTuple_New(count ? count + 1 : 2);
    if (key == NULL) {
        Py_DECREF(sid);
        return NULL;
    }
    PyTuple_SET_ITEM(key, 0, sid); /* (the key holds the number) */
    if (!count)
        PyTuple_SET_ITEM(key, 1, Py_NewRef(arg_key));
    long depth = -1;
    int fallible = where != Py_None;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *s = PyTuple_GET_ITEM(srcs, i);
        if (!Py_IS_TYPE(s, NodeType) || SLOT(s, off_depth) == NULL || SLOT(s, off_fallible) == NULL) {
            Py_DECREF(key);
            PyErr_SetString(PyExc_TypeError, "numloom: a source is not a node");
            return NULL;
        }
        PyObject *id = PyLong_FromVoidPtr(s);
        if (id == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, i + 1, id);
        long d = PyLong_AsLong(SLOT(s, off_depth));
        if (d == -1 && PyErr_Occurred()) {
            Py_DECREF(key);
            return NULL;
        }
        if (d > depth)
            depth = d;
        fallible |= SLOT(s, off_fallible) == Py_True;
    }
    PyObject *ref = PyDict_GetItemWithError(interned, key);
    if (ref != NULL) {
        PyObject *found = nl_referent(ref);
        if (found != NULL) {
            Py_DECREF(key);
            return Py_NewRef(found);
        }
    } else if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *n = NodeType->tp_alloc(NodeType, 0);
    PyObject *depth_obj = PyLong_FromLong(depth + 1);
    if (n == NULL || depth_obj == NULL) {
        Py_XDECREF(n);
        Py_XDECREF(depth_obj);
        Py_DECREF(key);
        return NULL;
    }
    slot_set(n, off_op, Py_NewRef(op));
    slot_set(n, off_srcs, Py_NewRef(srcs));
    slot_set(n, off_arg, Py_NewRef(arg));
    slot_set(n, off_shape, Py_NewRef(shape));
    slot_set(n, off_dtype, Py_NewRef(dtype));
    slot_set(n, off_where, Py_NewRef(where));
    slot_set(n, off_sid, Py_NewRef(PyTuple_GET_ITEM(key, 0)));
    slot_set(n, off_call, Py_NewRef(Py_None));
    slot_set(n, off_depth, depth_obj);
    slot_set(n, off_fallible, Py_NewRef(fallible ? Py_True : Py_False));
    /* (dag._interned: dead nodes' keys forgotten now and then) */
    int failed = remember(interned, key, n, &inserts, (1 << 14) - 1, dag_sweep);
    Py_DECREF(key);
    if (failed) {
        Py_DECREF(n);
        return NULL;
    }
    return n;
}

/* The interned MAP node ``name(srcs)`` of ``shape`` and ``dtype`` (dag.map_node). */
static PyObject *map_node(PyObject *srcs, PyObject *name, PyObject *shape, PyObject *dtype) {
    PyObject *sid = memo_get(sid_memo, name, dtype, shape, Py_None);
    if (sid != NULL)
        return intern_numbered(op_map, srcs, name, shape, dtype, Py_None, Py_NewRef(sid),
                               Py_None);
    PyObject *skey = PyTuple_Pack(4, map_id, dtype, shape, name);
    if (skey == NULL)
        return NULL;
    sid = structure_number(skey);
    Py_DECREF(skey);
    if (sid == NULL)
        return NULL;
    memo_put(sid_memo, name, dtype, shape, Py_None, sid);
    return intern_numbered(op_map, srcs, name, shape, dtype, Py_None, sid, Py_None);
}

/* intern(op, srcs, arg, shape, dtype, where, shape_key, arg_key): dag._intern, in C. */
static PyObject *intern_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "intern(op, srcs, arg, shape, dtype, where, shape_key, arg_key)");
        return NULL;
    }
    PyObject *srcs = args[1];
    if (PyTuple_Check(srcs))
        return intern_node(args[0], srcs, args[2], args[3], args[4], args[5], args[6], args[7]);
    srcs = PySequence_Tuple(srcs);
    if (srcs == NULL)
        return NULL;
    PyObject *n = intern_node(args[0], srcs, args[2], args[3], args[4], args[5], args[6], args[7]);
    Py_DECREF(srcs);
    return n;
}

/* Operand ``x`` as a node of ``dtype`` broadcast to ``shape`` (ufuncs.as_loop_node). */
static PyObject *loop_node(PyObject *x, PyObject *dtype, PyObject *shape) {
    PyTypeObject *t = Py_TYPE(x);
    if (t == ArrayType || t == ScalarType) {
        Handle *h = (Handle *)x;
        if (h->identity == Py_True && h->dtype == dtype && h->view != NULL &&
            PyTuple_Check(h->view) && PyTuple_GET_SIZE(h->view) > 0 && h->storage != NULL) {
            PyObject *own = PyTuple_GET_ITEM(h->view, 0);
            int same = own == shape ? 1 : PyObject_RichCompareBool(own, shape, Py_EQ);
            if (same < 0)
                return NULL;
            PyObject *error = SLOT(h->storage, off_error);
            PyObject *version = SLOT(h->storage, off_version);
            if (same && error == Py_None && version != NULL)
                return Py_NewRef(version);
        }
    } else if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type) {
        PyObject *value = x;
        int keyed = 1;
        if (t == &PyFloat_Type) {
            double v = PyFloat_AS_DOUBLE(x);
            keyed = !(v == 0.0 || v != v); /* (0.0, -0.0 and NaNs: keyed by their hex form) */
        }
        if (keyed) {
            PyObject *found = memo_get(scalar_memo, dtype, shape, (PyObject *)t, value);
            if (found != NULL)
                return Py_NewRef(found);
            PyObject *key = PyTuple_Pack(4, dtype, shape, (PyObject *)t, value);
            if (key == NULL)
                return NULL;
            found = PyDict_GetItemWithError(scalars_cache, key);
            Py_DECREF(key);
            if (found != NULL) {
                memo_put(scalar_memo, dtype, shape, (PyObject *)t, value, found);
                return Py_NewRef(found);
            }
            if (PyErr_Occurred())
                return NULL;
        }
    }
    return PyObject_CallFunctionObjArgs(as_loop_node_py, x, dtype, shape, NULL);
}

/* --- fields read by the element paths (_speedups.c) ------------------------------------- */

static PyObject *field_names[3];

static int field_slot(PyObject *o, int which, Py_ssize_t *off) {
    if (!installed)
        return 0;
    PyTypeObject *t = which == NL_VERSION ? StorageType : which == NL_ARG ? NodeType : BufferType;
    *off = which == NL_VERSION ? off_version : which == NL_ARG ? off_arg : off_bexports;
    return t == BufferType ? IS_BUFFER(o) : Py_IS_TYPE(o, t);
}

PyObject *nl_field(PyObject *o, int which) {
    Py_ssize_t off;
    if (field_slot(o, which, &off)) {
        PyObject *v = SLOT(o, off);
        if (v == NULL)
            PyErr_Format(PyExc_AttributeError, "numloom: a field of %R is not set", o);
        return Py_XNewRef(v);
    }
    if (field_names[which] == NULL) {
        const char *names[3] = {"version", "arg", "exports"};
        field_names[which] = PyUnicode_InternFromString(names[which]);
        if (field_names[which] == NULL)
            return NULL;
    }
    return PyObject_GetAttr(o, field_names[which]);
}

/* --- results ----------------------------------------------------------------------------- */

static long config_long(PyObject *name) {
    PyObject *v = PyDict_GetItemWithError(PyModule_GetDict(config_module), name);
    if (v == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_AttributeError, name);
        return -1;
    }
    return PyLong_AsLong(v);
}

/* A new Storage whose pending version is ``n``, registered (realize.Storage, register). */
/* A new Storage (realize.Storage) whose version is ``n``, unregistered. */
static PyObject *alloc_storage(PyObject *n, PyObject *device, PyObject *eager) {
    PyObject *seq = PyIter_Next(seq_counter);
    if (seq == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "numloom: the storage counter ended");
        return NULL;
    }
    PyObject *s = StorageType->tp_alloc(StorageType, 0);
    if (s == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    slot_set(s, off_version, Py_NewRef(n));
    slot_set(s, off_device, Py_NewRef(device));
    slot_set(s, off_error, Py_NewRef(Py_None));
    slot_set(s, off_seq, seq);
    slot_set(s, off_mirror, Py_NewRef(Py_None));
    slot_set(s, off_eager, Py_NewRef(eager));
    return s;
}

/* The whole view of ``shape`` (array._whole, kept in ``views``), a new reference. */
static PyObject *whole_view(PyObject *shape) {
    PyObject *view = memo_get(view_memo, shape, Py_None, Py_None, Py_None);
    if (view != NULL)
        return Py_NewRef(view);
    view = PyDict_GetItemWithError(views, shape);
    if (view != NULL) {
        memo_put(view_memo, shape, Py_None, Py_None, Py_None, view);
        return Py_NewRef(view);
    }
    if (PyErr_Occurred())
        return NULL;
    view = PyObject_CallOneArg(whole_py, shape);
    if (view == NULL)
        return NULL;
    if (PyDict_GET_SIZE(views) >= 4096)
        PyDict_Clear(views);
    if (PyDict_SetItem(views, shape, view) < 0) {
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

static PyObject *new_storage(PyObject *n, PyObject *device) {
    PyObject *s = alloc_storage(n, device, Py_False);
    if (s == NULL)
        return NULL;
    if (SLOT(n, off_op) == op_buffer)
        return s; /* (computed already: not pending, as realize.Storage registers it) */
    /* (realize._pending: dead storages' entries dropped now and then) */
    PyObject *id = PyLong_FromVoidPtr(s);
    int failed = id == NULL || remember(pending_refs, id, s, &adds, 4095, pending_sweep) < 0;
    Py_XDECREF(id);
    if (failed) {
        Py_DECREF(s);
        return NULL;
    }
    long depth = PyLong_AsLong(SLOT(n, off_depth));
    long flush_depth = config_long(s_FLUSH_DEPTH);
    long flush_width = config_long(s_FLUSH_WIDTH);
    if (PyErr_Occurred()) {
        Py_DECREF(s);
        return NULL;
    }
    if (depth > flush_depth || PyDict_GET_SIZE(pending_refs) > flush_width) {
        PyObject *r = PyObject_CallOneArg(register_limits, s); /* (may evaluate now) */
        if (r == NULL) {
            Py_DECREF(s);
            return NULL;
        }
        Py_DECREF(r);
    }
    return s;
}

/* A new array whose value is the whole of node ``n`` (array.result). */
static PyObject *new_result(PyObject *n, PyObject *device) {
    PyObject *shape = SLOT(n, off_shape), *dtype = SLOT(n, off_dtype);
    PyObject *view = whole_view(shape);
    if (view == NULL)
        return NULL;
    PyObject *storage = new_storage(n, device);
    if (storage == NULL) {
        Py_DECREF(view);
        return NULL;
    }
    PyTypeObject *cls = PyTuple_GET_SIZE(shape) ? ArrayType : ScalarType;
    Handle *out = (Handle *)cls->tp_alloc(cls, 0);
    if (out == NULL) {
        Py_DECREF(view);
        Py_DECREF(storage);
        return NULL;
    }
    out->storage = storage;
    out->view = view;
    out->readonly = Py_NewRef(Py_False);
    out->dtype = Py_NewRef(dtype);
    out->identity = Py_NewRef(Py_True);
    out->host = Py_NewRef(Py_None);
    return (PyObject *)out;
}

/* adopt(data): api/eager.py's ``adopted`` (array.adopt_host, marked eager, its host view
 * ready) in C, for ``data`` a NumPy array of one axis or more that NumPy just made,
 * C-contiguous and of a numloom dtype (the caller checks): a new CPU array whose memory it is. */
static PyObject *adopt(PyObject *data, PyObject *eager) {
    /* (``data.setflags(False)``: a third of ``data.flags.writeable = False``'s cost, which
     * makes NumPy's flags object first) */
    PyObject *done = PyObject_CallMethodOneArg(data, s_setflags, Py_False);
    if (done == NULL)
        return NULL;
    Py_DECREF(done);
    PyObject *shape = PyObject_GetAttr(data, s_shape);
    PyObject *dtype = shape == NULL ? NULL : PyObject_GetAttr(data, s_dtype);
    PyObject *host = dtype == NULL ? NULL : PyObject_CallMethodNoArgs(data, s_view);
    PyObject *buffer = host == NULL ? NULL : BufferType->tp_alloc(BufferType, 0);
    if (buffer == NULL || !PyTuple_CheckExact(shape) || PyTuple_GET_SIZE(shape) < 1) {
        if (buffer != NULL)
            PyErr_SetString(PyExc_TypeError, "adopt(data): data of one axis or more");
        Py_XDECREF(shape);
        Py_XDECREF(dtype);
        Py_XDECREF(host);
        Py_XDECREF(buffer);
        return NULL;
    }
    slot_set(buffer, off_bdata, Py_NewRef(data));
    slot_set(buffer, off_bdevice, Py_NewRef(cpu_name));
    slot_set(buffer, off_brelease, Py_NewRef(Py_None));
    slot_set(buffer, off_bexports, Py_NewRef(Py_None));
    PyObject *n = NULL, *storage = NULL, *view = NULL, *ref = NULL;
    Handle *out = NULL;
    if (dtype == last_dtype && same_ints(shape, last_shape)) {
        /* (the last adopted array's dtype and shape: its number and view, and its shape
         * tuple shared) */
        Py_SETREF(shape, Py_NewRef(last_shape));
        PyObject *key = PyLong_FromVoidPtr(buffer);
        PyObject *no_srcs = key == NULL ? NULL : PyTuple_New(0);
        if (no_srcs != NULL)
            n = intern_numbered(op_buffer, no_srcs, buffer, shape, dtype, Py_None,
                                Py_NewRef(last_sid), key);
        Py_XDECREF(key);
        Py_XDECREF(no_srcs);
        if (n == NULL)
            goto fail;
        view = Py_NewRef(last_view);
    } else {
        PyObject *skey = PyTuple_Pack(4, buffer_id, dtype, shape, Py_None);
        PyObject *key = skey == NULL ? NULL : PyLong_FromVoidPtr(buffer);
        PyObject *no_srcs = key == NULL ? NULL : PyTuple_New(0);
        if (no_srcs != NULL)
            n = intern_node(op_buffer, no_srcs, buffer, shape, dtype, Py_None, skey, key);
        Py_XDECREF(skey);
        Py_XDECREF(key);
        Py_XDECREF(no_srcs);
        if (n == NULL)
            goto fail;
        view = whole_view(shape);
        if (view != NULL && is_builtin_dtype(dtype)) {
            last_dtype = dtype;
            Py_XSETREF(last_shape, Py_NewRef(shape));
            Py_XSETREF(last_sid, Py_NewRef(SLOT(n, off_sid)));
            Py_XSETREF(last_view, Py_NewRef(view));
        }
    }
    ref = view == NULL ? NULL : PyWeakref_NewRef(n, NULL);
    storage = ref == NULL ? NULL : alloc_storage(n, cpu_name, eager);
    if (storage == NULL)
        goto fail;
    out = (Handle *)ArrayType->tp_alloc(ArrayType, 0);
    if (out == NULL)
        goto fail;
    PyObject *ndim = PyLong_FromSsize_t(PyTuple_GET_SIZE(shape));
    PyObject *held = ndim == NULL ? NULL : PyTuple_Pack(4, ref, host, Py_None, ndim);
    Py_XDECREF(ndim);
    if (held == NULL)
        goto fail;
    PyObject_GC_UnTrack(held); /* (no cycle through it: _speedups.c's ``untracked``) */
    out->storage = storage;
    out->view = view;
    out->readonly = Py_NewRef(Py_False);
    out->dtype = dtype;
    out->identity = Py_NewRef(Py_True);
    out->host = held;
    Py_DECREF(n);
    Py_DECREF(ref);
    Py_DECREF(host);
    Py_DECREF(shape);
    Py_DECREF(buffer);
    return (PyObject *)out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(n);
    Py_XDECREF(storage);
    Py_XDECREF(view);
    Py_XDECREF(ref);
    Py_XDECREF(host);
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(buffer);
    return NULL;
}

static PyObject *adopt_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError,
                        "adopt(data, eager=True) takes a NumPy array, once installed");
        return NULL;
    }
    return adopt(args[0], nargs == 2 ? (PyObject_IsTrue(args[1]) ? Py_True : Py_False) : Py_True);
}

/* Whether ``storage`` is on the CPU. */
static int on_cpu(PyObject *storage) {
    PyObject *device = SLOT(storage, off_device);
    return device == cpu_name || (device != NULL && PyUnicode_Check(device) &&
                                  PyUnicode_CompareWithASCIIString(device, "cpu") == 0);
}

/* The version node of handle ``h``'s storage (borrowed), where that storage is on the CPU
 * without an error; else NULL. */
static PyObject *cpu_version(Handle *h) {
    PyObject *storage = h->storage;
    PyObject *version = storage == NULL ? NULL : SLOT(storage, off_version);
    if (version == NULL || !Py_IS_TYPE(version, NodeType) || SLOT(storage, off_error) != Py_None ||
        !on_cpu(storage))
        return NULL;
    return version;
}

/* The host view of array handle ``h`` (borrowed), where it is current for its storage's
 * version and that storage is computed on the CPU without an error; else NULL. */
static PyObject *current_cpu_view(Handle *h) {
    PyObject *held = h->host, *storage = h->storage;
    if (held == NULL || storage == NULL || !PyTuple_CheckExact(held) || PyTuple_GET_SIZE(held) < 4)
        return NULL;
    if (nl_referent(PyTuple_GET_ITEM(held, 0)) != SLOT(storage, off_version) ||
        SLOT(storage, off_error) != Py_None || !on_cpu(storage))
        return NULL;
    return PyTuple_GET_ITEM(held, 1);
}

/* api/eager.py's ``scalar_math``: whether ``args`` are 0-d results on the CPU (at least one,
 * each computed or, in a program's call outside tracing, pending arithmetic of scalars: the
 * Python path evaluates it) and scalars, 1; 0 where not; -1 on an error. */
static int scalar_math(PyObject *const *args, Py_ssize_t nargs) {
    int found = 0, pending = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);
        if (t == ScalarType) {
            PyObject *version = cpu_version((Handle *)args[i]);
            if (version == NULL)
                return 0;
            if (SLOT(version, off_op) != op_buffer) {
                if (SLOT(version, off_op) != op_map)
                    return 0; /* (a reduction's own result: it fuses with its uses) */
                pending = 1;
            }
            found = 1;
        } else if (t == ArrayType) {
            return 0;
        } else {
            int in = PySet_Contains(eager_scalars, (PyObject *)t);
            if (in <= 0)
                return in;
        }
    }
    if (found && pending)
        return PyList_GET_SIZE(tracing_list) != 0 ? 0 : called_by_user();
    return found;
}

/* ``a[mask]`` for a boolean numloom ``mask`` of computed CPU arrays whose host views are
 * current (a data-dependent loop's ``z[keep]``): NumPy's compaction of the views, adopted and
 * marked as api/indexing.py's ``_compact_now`` does. NOT_HANDLED where that does not apply
 * (the caller checked that nothing is being traced). */
PyObject *nl_compact(PyObject *self, PyObject *key) {
    if (!installed || !Py_IS_TYPE(self, ArrayType) || !Py_IS_TYPE(key, ArrayType) ||
        ((Handle *)key)->dtype != bool_dtype)
        return NOT_HANDLED;
    PyObject *values = current_cpu_view((Handle *)self);
    PyObject *mask = values == NULL ? NULL : current_cpu_view((Handle *)key);
    if (mask == NULL)
        return NOT_HANDLED;
    PyObject *picked = PyObject_GetItem(values, mask); /* (NumPy's errors) */
    if (picked == NULL)
        return NULL;
    PyObject *out = adopt(picked, Py_True);
    Py_DECREF(picked);
    return out;
}

/* result(n, device): array.result in C, a new array whose value is the whole of node ``n``. */
static PyObject *result_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs != 2 || !Py_IS_TYPE(args[0], NodeType) || SLOT(args[0], off_shape) == NULL ||
        !PyTuple_Check(SLOT(args[0], off_shape)) || SLOT(args[0], off_dtype) == NULL) {
        PyErr_SetString(PyExc_TypeError, "result(node, device)");
        return NULL;
    }
    return new_result(args[0], args[1]);
}

/* The traced MAP ``name`` of ``operands`` read as ``loop``'s input dtypes and broadcast to
 * ``shape``, giving ``loop[count]``: a new array on ``device`` whose value is that node. With
 * ``raising``, the node keeps NumPy's error state and the user's line (fperrors.record). */
static PyObject *traced_map(PyObject *const *operands, Py_ssize_t count, PyObject *loop,
                            PyObject *name, PyObject *shape, PyObject *device, int raising) {
    PyObject *srcs = PyTuple_New(count);
    if (srcs == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *s = loop_node(operands[i], PyTuple_GET_ITEM(loop, i), shape);
        if (s == NULL) {
            Py_DECREF(srcs);
            return NULL;
        }
        PyTuple_SET_ITEM(srcs, i, s);
    }
    PyObject *n = map_node(srcs, name, shape, PyTuple_GET_ITEM(loop, count));
    Py_DECREF(srcs);
    if (n == NULL)
        return NULL;
    if (raising) {
        PyObject *state = NULL;
        if (PyContextVar_Get(extobj_var, NULL, &state) < 0 || state == NULL) {
            Py_DECREF(n);
            return NULL;
        }
        PyObject *where = user_line();
        PyObject *filters = where == NULL ? NULL : PyObject_GetAttr(warnings_module, s_filters);
        PyObject *call = filters == NULL ? NULL : PyTuple_Pack(3, state, where, filters);
        Py_DECREF(state);
        Py_XDECREF(where);
        Py_XDECREF(filters);
        if (call == NULL) {
            Py_DECREF(n);
            return NULL;
        }
        /* an interned node made before at another line keeps both calls (fperrors.merge) */
        PyObject *old = SLOT(n, off_call);
        if (old != NULL && old != Py_None) {
            int same = PyTuple_CheckExact(old) && PyTuple_GET_SIZE(old) >= 2 ? 1 : 0;
            if (same) {
                PyObject *a = PyTuple_GET_ITEM(old, 1), *b = PyTuple_GET_ITEM(call, 1);
                same = a == b ? 1 : PyObject_RichCompareBool(a, b, Py_EQ);
            }
            if (same == 0)
                Py_SETREF(call, PyObject_CallFunctionObjArgs(merge_calls, old, call, NULL));
            if (same < 0 || call == NULL) {
                Py_XDECREF(call);
                Py_DECREF(n);
                return NULL;
            }
        }
        slot_set(n, off_call, call);
    }
    PyObject *out = new_result(n, device);
    Py_DECREF(n);
    return out;
}

/* --- the traced operation ------------------------------------------------------------------ */

/* The shape two shapes broadcast to (NumPy's rule: aligned from the right, each pair equal or
 * one of them 1), a new tuple; NULL with no error set when they do not broadcast. */
static PyObject *broadcast_shapes(PyObject *a, PyObject *b) {
    if (!PyTuple_Check(a) || !PyTuple_Check(b))
        return NOT_HANDLED;
    Py_ssize_t na = PyTuple_GET_SIZE(a), nb = PyTuple_GET_SIZE(b), n = na > nb ? na : nb;
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = k < n - na ? NULL : PyTuple_GET_ITEM(a, k - (n - na));
        PyObject *y = k < n - nb ? NULL : PyTuple_GET_ITEM(b, k - (n - nb));
        long vx = x == NULL ? 1 : PyLong_AsLong(x), vy = y == NULL ? 1 : PyLong_AsLong(y);
        if ((vx == -1 || vy == -1) && PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
        PyObject *pick;
        if (vx == vy || vy == 1)
            pick = x != NULL ? x : y;
        else if (vx == 1)
            pick = y;
        else {
            Py_DECREF(out);
            return NOT_HANDLED;
        }
        PyTuple_SET_ITEM(out, k, Py_NewRef(pick));
    }
    return out;
}

/* Whether Python int ``x`` lies in ``bounds`` = (low, high). */
static int within(PyObject *x, PyObject *bounds) {
    if (!PyTuple_Check(bounds) || PyTuple_GET_SIZE(bounds) != 2)
        return 0;
    int low = PyObject_RichCompareBool(PyTuple_GET_ITEM(bounds, 0), x, Py_LE);
    if (low <= 0)
        return low;
    return PyObject_RichCompareBool(x, PyTuple_GET_ITEM(bounds, 1), Py_LE);
}

/* Whether NumPy's array ``made`` is C-contiguous memory of its own (1), not (0), or -1. */
static int own_c_memory(PyObject *made) {
    PyObject *flags = PyObject_GetAttr(made, s_flags);
    if (flags == NULL)
        return -1;
    PyObject *c = PyObject_GetAttr(flags, s_c_contiguous);
    PyObject *own = c == NULL ? NULL : PyObject_GetAttr(flags, s_owndata);
    Py_DECREF(flags);
    int ok = own == NULL ? -1 : (c == Py_True && own == Py_True);
    Py_XDECREF(c);
    Py_XDECREF(own);
    return ok;
}

/* api/eager.py's ``call`` for ``uf(*args)``, one or two operands, no output given, in C:
 * operands are arrays whose host views are current on the CPU (of at most eager_elements
 * elements) or Python scalars, under NumPy's default error state. NumPy's ufunc runs on the
 * views with the state's warnings as calls, warned again at the user's line; its result is
 * adopted and marked. NOT_HANDLED where any of this does not hold (the Python path decides). */
/* The size of handle ``h``'s view if at most eager_elements, else -1. */
static Py_ssize_t eager_size(Handle *h) {
    PyObject *shape = PyTuple_GET_ITEM(h->view, 0);
    if (shape == NULL || !PyTuple_Check(shape))
        return -1;
    Py_ssize_t size = 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); k++) {
        Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
        if (n < 0) {
            PyErr_Clear();
            return -1;
        }
        size *= n;
        if (size > eager_elements)
            return -1;
    }
    return size;
}

/* NumPy's function ``np_fn`` on ``hosts[1..nargs]`` (and into ``out`` unless NULL) under
 * NumPy's default error state, its warnings given at the user's line under its name
 * (api/eager.py's ``_run``). */
static PyObject *eager_run(PyObject *np_fn, PyObject **hosts, Py_ssize_t nargs, PyObject *out) {
    PyObject *kinds = PyList_New(0);
    if (kinds == NULL || PyObject_SetAttr(eager_caught, s_kinds, kinds) < 0) {
        Py_XDECREF(kinds);
        return NULL;
    }
    PyObject *token = PyContextVar_Set(extobj_var, eager_calling);
    PyObject *made = NULL;
    if (token != NULL) {
        if (out != NULL)
            hosts[nargs + 1] = out;
        made = PyObject_Vectorcall(np_fn, hosts + 1, nargs | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                   out == NULL ? NULL : out_kwnames);
        if (PyContextVar_Reset(extobj_var, token) < 0)
            Py_CLEAR(made);
        Py_DECREF(token);
    }
    if (made != NULL && PyList_GET_SIZE(kinds) > 0) { /* NumPy's warnings, at the user's line */
        PyObject *name = PyObject_GetAttr(np_fn, s_name);
        PyObject *operands = name == NULL ? NULL : PyTuple_New(nargs);
        for (Py_ssize_t i = 0; operands != NULL && i < nargs; i++)
            PyTuple_SET_ITEM(operands, i, Py_NewRef(hosts[i + 1]));
        PyObject *r = operands == NULL ? NULL
                                       : PyObject_CallFunctionObjArgs(eager_warn, kinds, name,
                                                                      operands, NULL);
        Py_XDECREF(operands);
        Py_XDECREF(name);
        if (r == NULL)
            Py_CLEAR(made);
        Py_XDECREF(r);
    }
    Py_DECREF(kinds);
    return made;
}

/* NumPy's ufunc of ``uf`` on ``hosts[1..nargs]`` (and into ``out`` unless NULL): ``eager_run``. */
static PyObject *eager_numpy(PyObject *uf, PyObject **hosts, Py_ssize_t nargs, PyObject *out) {
    PyObject *np_ufunc = PyObject_GetAttr(uf, s_np);
    if (np_ufunc == NULL)
        return NULL;
    PyObject *made = eager_run(np_ufunc, hosts, nargs, out);
    Py_DECREF(np_ufunc);
    return made;
}

/* Whether ``x`` is NumPy's array (not a subclass) of at most eager_elements elements of
 * numloom's kinds (api/eager.py's ``_small_numpy``): 1, 0, or -1 on an error. */
static int small_numpy(PyObject *x) {
    if (Py_TYPE(x) != np_ndarray)
        return 0;
    PyObject *size = PyObject_GetAttr(x, s_size);
    if (size == NULL)
        return -1;
    Py_ssize_t n = PyLong_AsSsize_t(size);
    Py_DECREF(size);
    if (n == -1 && PyErr_Occurred())
        return -1;
    if (n > eager_elements)
        return 0;
    PyObject *dtype = PyObject_GetAttr(x, s_dtype);
    PyObject *kind = dtype == NULL ? NULL : PyObject_GetAttr(dtype, s_kind);
    Py_XDECREF(dtype);
    if (kind == NULL)
        return -1;
    int ok = PyUnicode_Check(kind) && PyUnicode_GET_LENGTH(kind) == 1 &&
             strchr("biufc", (int)PyUnicode_READ_CHAR(kind, 0)) != NULL;
    Py_DECREF(kind);
    return ok;
}

/* The operands' host views (or Python scalars) into ``hosts[1..nargs]``, under NumPy's
 * default error state and outside tracing: 1, or 0 (NOT_HANDLED), or -1 (an error). The NumPy
 * array type is left in ``*np_array``. */
static int eager_operands(PyObject *const *args, Py_ssize_t nargs, PyObject **hosts,
                          PyTypeObject **np_array) {
    if (PyList_GET_SIZE(tracing_list) != 0)
        return 0;
    *np_array = NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *x = args[i];
        PyTypeObject *t = Py_TYPE(x);
        if (t == ArrayType || t == ScalarType) {
            if (eager_size((Handle *)x) < 0)
                return 0;
            PyObject *host = current_cpu_view((Handle *)x);
            if (host == NULL) {
                /* a computed array's new handle (``w.T``, a row): its host view made now */
                PyObject *version = cpu_version((Handle *)x);
                if (version == NULL || SLOT(version, off_op) != op_buffer)
                    return 0;
                PyObject *made = PyObject_CallMethodNoArgs(x, s_host_view);
                if (made == NULL)
                    return -1;
                Py_DECREF(made);
                host = current_cpu_view((Handle *)x);
                if (host == NULL)
                    return 0;
            }
            hosts[i + 1] = host;
            *np_array = Py_TYPE(host);
        } else if (t == np_ndarray) { /* NumPy's small array (a library's data): as it is */
            int small = small_numpy(x);
            if (small <= 0)
                return small;
            hosts[i + 1] = x;
        } else {
            /* a Python scalar, or NumPy's of numloom's kinds (``x[i]`` gives one) */
            int scalar = PySet_Contains(eager_scalars, (PyObject *)t);
            if (scalar <= 0)
                return scalar;
            hosts[i + 1] = x;
        }
    }
    PyObject *state = NULL;
    if (PyContextVar_Get(extobj_var, NULL, &state) < 0)
        return -1;
    int plain_state = state == eager_default;
    Py_XDECREF(state);
    return *np_array != NULL && plain_state; /* (another error state: the Python path) */
}

/* ``uf(*inputs, out)`` of api/eager.py's ``into``, in C, where ``out`` is an array of a
 * data-dependent loop whose memory its storage alone holds (in place: no other array, export
 * or pending work reads it) and whose host view is current and whole. NOT_HANDLED elsewhere. */
static PyObject *eager_into(PyObject *uf, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *hosts[5] = {NULL, NULL, NULL, NULL, NULL};
    PyTypeObject *np_array;
    Handle *out = (Handle *)args[nargs];
    int ready = eager_operands(args, nargs, hosts, &np_array);
    if (ready <= 0)
        return ready < 0 ? NULL : NOT_HANDLED;
    PyObject *storage = out->storage, *version = SLOT(storage, off_version);
    if (out->readonly != Py_False || out->identity != Py_True || current_cpu_view(out) == NULL ||
        eager_size(out) < 0 || Py_REFCNT(version) > 1)
        return NOT_HANDLED;
    PyObject *buffer = SLOT(version, off_arg);
    if (!IS_BUFFER(buffer) || Py_REFCNT(buffer) > 1 ||
        SLOT(buffer, off_bexports) != Py_None)
        return NOT_HANDLED;
    PyObject *data = SLOT(buffer, off_bdata);
    PyObject *base = PyObject_GetAttr(data, s_base);
    if (base == NULL)
        return NULL;
    int own = base == Py_None || SLOT(buffer, off_brelease) != Py_None;
    Py_DECREF(base);
    if (!own)
        return NOT_HANDLED;
    PyObject *held = out->host, *target = PyTuple_GET_ITEM(held, 2);
    if (target == Py_None) { /* a writable view, kept in the host view for the next call */
        PyObject *flags = PyObject_GetAttr(data, s_flags);
        if (flags == NULL || PyObject_SetAttr(flags, s_writeable, Py_True) < 0) {
            Py_XDECREF(flags);
            return NULL;
        }
        target = PyObject_CallMethodNoArgs(data, s_view);
        int failed = PyObject_SetAttr(flags, s_writeable, Py_False);
        Py_DECREF(flags);
        PyObject *kept = target == NULL || failed < 0 ? NULL
                         : PyTuple_Pack(4, PyTuple_GET_ITEM(held, 0), PyTuple_GET_ITEM(held, 1),
                                        target, PyTuple_GET_ITEM(held, 3));
        Py_XDECREF(target);
        if (kept == NULL)
            return NULL;
        Py_SETREF(out->host, kept);
        target = PyTuple_GET_ITEM(kept, 2);
    }
    PyObject *made = eager_numpy(uf, hosts, nargs, target);
    if (made == NULL)
        return NULL;
    Py_DECREF(made);
    return Py_NewRef((PyObject *)out);
}

/* What NumPy's call run now gave (``made``, from operands whose NumPy array type is
 * ``np_array``), as api/eager.py's ``made_now`` gives it: its own new C-ordered array adopted
 * and marked, anything else by ``made_now`` (NumPy's scalar for a 0-d result). */
static PyObject *adopted_now(PyObject *made, PyTypeObject *np_array) {
    int own = Py_IS_TYPE(made, np_array) ? own_c_memory(made) : 0;
    return own < 0   ? NULL
           : own > 0 ? adopt(made, Py_True)
                     : PyObject_CallOneArg(eager_adopted, made); /* (tuples, others) */
}

static PyObject *eager_plain(PyObject *uf, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *hosts[4] = {NULL, NULL, NULL, NULL}; /* (hosts[0] for the vectorcall's offset) */
    PyTypeObject *np_array;
    int ready = eager_operands(args, nargs, hosts, &np_array);
    if (ready <= 0)
        return ready < 0 ? NULL : NOT_HANDLED;
    PyObject *made = eager_numpy(uf, hosts, nargs, NULL);
    if (made == NULL)
        return NULL;
    PyObject *out = adopted_now(made, np_array);
    Py_DECREF(made);
    return out;
}

/* function_now(np_fn, args): api/eager.py's ``function_now`` in C (NumPy's ``dot``,
 * ``matmul``, ``mean`` of a loop's small computed arrays, now), where an operand is a marked
 * array and every one an array whose host view is current, NumPy's small array or a scalar,
 * none empty, under NumPy's default error state. None where that does not hold (the Python
 * path decides). */
static int piece_of_large(Handle *h);

static PyObject *function_now(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs != 2 || !PyTuple_CheckExact(args[1]) || PyTuple_GET_SIZE(args[1]) > 3)
        Py_RETURN_NONE;
    PyObject *operands = args[1];
    Py_ssize_t n = PyTuple_GET_SIZE(operands);
    int marked = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(operands, i);
        if (Py_IS_TYPE(x, ArrayType) || Py_IS_TYPE(x, ScalarType)) {
            PyObject *storage = ((Handle *)x)->storage;
            marked |= storage != NULL && SLOT(storage, off_eager) == Py_True;
            if (eager_size((Handle *)x) == 0)
                Py_RETURN_NONE; /* (empty: NumPy's warnings of it are the Python path's) */
            if (!marked) { /* (a column of a large computed matrix: ``Q[:, i] @ A[:, j]``) */
                int piece = piece_of_large((Handle *)x);
                if (piece < 0)
                    return NULL;
                marked = piece;
            }
        } else if (Py_IS_TYPE(x, np_ndarray)) {
            PyObject *size = PyObject_GetAttr(x, s_size);
            int empty = size == NULL ? -1 : PyObject_Not(size);
            Py_XDECREF(size);
            if (empty < 0)
                return NULL;
            if (empty)
                Py_RETURN_NONE;
        }
    }
    if (!marked)
        Py_RETURN_NONE;
    PyObject *hosts[5] = {NULL, NULL, NULL, NULL, NULL};
    PyTypeObject *np_array;
    int ready = eager_operands(&PyTuple_GET_ITEM(operands, 0), n, hosts, &np_array);
    if (ready < 0)
        return NULL;
    if (ready == 0)
        Py_RETURN_NONE;
    PyObject *made = eager_run(args[0], hosts, n, NULL);
    if (made == NULL)
        return NULL;
    PyObject *out = adopted_now(made, np_array);
    Py_DECREF(made);
    return out;
}

/* api/eager.py's ``small_piece``: whether handle ``h`` is a small piece (at most
 * PIECE_ELEMENTS, and at most half) of a large computed CPU array (larger than the config's
 * EAGER_ELEMENTS: a point of a grid a loop calls a cost function on): an operator on it runs
 * NumPy's call now. -1 on an error. */
#define PIECE_ELEMENTS 4096 /* (api/eager.py's PIECE_ELEMENTS) */
#define BLOCK_ELEMENTS 64   /* (api/eager.py's BLOCK_ELEMENTS: a piece of as many axes) */
static int piece_of_large(Handle *h) {
    PyObject *version = cpu_version(h);
    if (version == NULL || SLOT(version, off_op) != op_buffer)
        return 0;
    Py_ssize_t n = eager_size(h);
    if (n <= 0 || n > PIECE_ELEMENTS)
        return 0;
    PyObject *shape = SLOT(version, off_shape);
    if (shape == NULL || !PyTuple_Check(shape))
        return 0;
    Py_ssize_t total = 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); k++) {
        Py_ssize_t m = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
        if (m < 0) {
            PyErr_Clear();
            return 0;
        }
        total *= m;
    }
    if (2 * n > total)
        return 0;
    if (n > BLOCK_ELEMENTS && PyTuple_GET_SIZE(PyTuple_GET_ITEM(h->view, 0)) >= PyTuple_GET_SIZE(shape))
        return 0; /* (a block of as many axes: a Dask chunk, whose work traces to fuse) */
    long small = config_long(s_EAGER_ELEMENTS);
    if (small < 0)
        return PyErr_Occurred() ? -1 : 0;
    return total > small;
}

/* ``uf(*args)`` for one or two operands, each a whole array or a Python scalar: the traced
 * result, or NOT_HANDLED (NULL, no error) when the Python path must run. */
static PyObject *plain(PyObject *uf, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs < 1 || nargs > 2)
        return NOT_HANDLED;
    PyObject *keys[3] = {uf, NULL, NULL};
    PyObject *first = NULL; /* the first array operand: the shape and device */
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);
        if (t == ArrayType || t == ScalarType) {
            PyObject *storage = ((Handle *)args[i])->storage;
            int runs_now = storage == NULL ? 0
                           : SLOT(storage, off_eager) == Py_True ? 1
                           : t == ScalarType ? scalar_math(args, nargs)
                                             : piece_of_large((Handle *)args[i]);
            if (runs_now < 0)
                return NULL;
            if (runs_now) {
                /* an array of a data-dependent loop, or a computed 0-d result with scalars:
                 * NumPy's call now (api/eager.py), or the Python path */
                PyObject *now = eager_plain(uf, args, nargs);
                if (now != NULL || PyErr_Occurred())
                    return now;
                PyObject *call[3] = {uf, args[0], nargs == 2 ? args[1] : NULL};
                PyObject *made = PyObject_Vectorcall(eager_py, call, nargs + 1, NULL);
                if (made == NULL || made != Py_None)
                    return made;
                Py_DECREF(made);
                return NOT_HANDLED;
            }
            keys[i + 1] = ((Handle *)args[i])->dtype;
            if (first == NULL)
                first = args[i];
        } else {
            keys[i + 1] = PyDict_GetItemWithError(scalar_keys, (PyObject *)t);
            if (keys[i + 1] == NULL && PyErr_Occurred())
                return NULL;
        }
    }
    /* (a scalar of a type not keyed, ``np.float64(x) - a``: the Python path, once an array of
     * a data-dependent loop, the other operand, has had its say above) */
    if (first == NULL || keys[1] == NULL || (nargs == 2 && keys[2] == NULL))
        return NOT_HANDLED;
    PyObject *p = memo_get(plain_memo, keys[0], keys[1], nargs == 2 ? keys[2] : Py_None,
                           Py_None);
    if (p == NULL) {
        PyObject *key = nargs == 2 ? PyTuple_Pack(3, keys[0], keys[1], keys[2])
                                   : PyTuple_Pack(2, keys[0], keys[1]);
        if (key == NULL)
            return NULL;
        p = PyDict_GetItemWithError(plain_loops, key);
        Py_DECREF(key);
        if (p == NULL || !Py_IS_TYPE(p, PlainType))
            return NOT_HANDLED; /* a first call: Python resolves and caches its loop */
        memo_put(plain_memo, keys[0], keys[1], nargs == 2 ? keys[2] : Py_None, Py_None, p);
    }
    PyObject *loop = SLOT(p, off_loop), *names = SLOT(p, off_names);
    if (loop == NULL || names == NULL || !PyTuple_Check(loop) || PyTuple_GET_SIZE(loop) != nargs + 1 ||
        !PyTuple_Check(names) || PyTuple_GET_SIZE(names) != 1 || SLOT(p, off_slow) != Py_False)
        return NOT_HANDLED;
    if (SLOT(p, off_check) == Py_True) {
        PyObject *bounds = SLOT(p, off_bounds);
        if (bounds == NULL || !PyTuple_Check(bounds) || PyTuple_GET_SIZE(bounds) != nargs)
            return NOT_HANDLED; /* (power: the value_matters check in Python) */
        for (Py_ssize_t i = 0; i < nargs; i++) {
            PyObject *b = PyTuple_GET_ITEM(bounds, i);
            if (b == Py_None || !PyLong_CheckExact(args[i]))
                continue;
            int in = within(args[i], b);
            if (in <= 0)
                return NOT_HANDLED; /* (an int out of the loop's range: NumPy's rules) */
        }
    }
    Handle *h = (Handle *)first;
    if (h->view == NULL || !PyTuple_Check(h->view) || PyTuple_GET_SIZE(h->view) < 1 ||
        h->storage == NULL)
        return NOT_HANDLED;
    PyObject *shape = PyTuple_GET_ITEM(h->view, 0);
    PyObject *device = SLOT(h->storage, off_device);
    if (device == NULL || !PyTuple_CheckExact(shape))
        return NOT_HANDLED;
    PyObject *broadcast = NULL; /* the call's shape, where the operands' shapes differ */
    if (nargs == 2) {
        PyObject *other = args[1] == first ? args[0] : args[1];
        PyTypeObject *t = Py_TYPE(other);
        if (t == ArrayType || t == ScalarType) {
            Handle *o = (Handle *)other;
            if (o->view == NULL || !PyTuple_Check(o->view) || PyTuple_GET_SIZE(o->view) < 1)
                return NOT_HANDLED;
            PyObject *oshape = PyTuple_GET_ITEM(o->view, 0);
            int same = oshape == shape ? 1 : PyObject_RichCompareBool(oshape, shape, Py_EQ);
            if (same < 0)
                return NULL;
            if (!same) {
                broadcast = broadcast_shapes(shape, oshape);
                if (broadcast == NULL)
                    return NULL; /* (NOT_HANDLED when they do not broadcast: NumPy's error) */
                shape = broadcast;
            }
        }
    }
    PyObject *out = traced_map(args, nargs, loop, PyTuple_GET_ITEM(names, 0), shape, device,
                               SLOT(p, off_raising) == Py_True);
    Py_XDECREF(broadcast); /* (the node holds its shape) */
    return out;
}

/* plain_call(uf, args): api/ufuncs.py's ``_plain_call``, in C where it can be (the Python
 * path otherwise). */
static PyObject *plain_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "plain_call(uf, args) takes a ufunc and a tuple");
        return NULL;
    }
    PyObject *made = plain(args[0], &PyTuple_GET_ITEM(args[1], 0), PyTuple_GET_SIZE(args[1]));
    if (made != NULL || PyErr_Occurred())
        return made;
    return PyObject_Vectorcall(plain_call_py, args, 2, NULL);
}

/* --- the handle's operators ------------------------------------------------------------------ */

static PyObject *not_installed(void) {
    PyErr_SetString(PyExc_RuntimeError, "numloom's operators are used before numloom.api loaded");
    return NULL;
}

static PyObject *binary(int which, PyObject *a, PyObject *b) {
    if (!installed)
        return not_installed();
    PyObject *args[2] = {a, b};
    PyObject *made = plain(op_ufuncs[which], args, 2);
    if (made != NULL || PyErr_Occurred())
        return made;
    PyObject *call[3] = {op_ufuncs[which], a, b};
    return PyObject_Vectorcall(binary_py, call, 3, NULL); /* (methods._binary) */
}

static PyObject *unary(int which, PyObject *a) {
    if (!installed)
        return not_installed();
    PyObject *made = plain(op_ufuncs[which], &a, 1);
    if (made != NULL || PyErr_Occurred())
        return made;
    return PyObject_CallOneArg(op_ufuncs[which], a);
}

#define BINARY(fn, which) \
    static PyObject *fn(PyObject *a, PyObject *b) { return binary(which, a, b); }
#define UNARY(fn, which) \
    static PyObject *fn(PyObject *a) { return unary(which, a); }
BINARY(nb_add, OP_ADD)
BINARY(nb_subtract, OP_SUB)
BINARY(nb_multiply, OP_MUL)
BINARY(nb_true_divide, OP_DIV)
BINARY(nb_floor_divide, OP_FLOORDIV)
BINARY(nb_remainder, OP_MOD)
BINARY(nb_and, OP_AND)
BINARY(nb_or, OP_OR)
BINARY(nb_xor, OP_XOR)
BINARY(nb_lshift, OP_LSHIFT)
BINARY(nb_rshift, OP_RSHIFT)
UNARY(nb_negative, OP_NEG)
UNARY(nb_positive, OP_POS)
UNARY(nb_absolute, OP_ABS)
UNARY(nb_invert, OP_INVERT)

PyNumberMethods nl_handle_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_subtract,
    .nb_multiply = nb_multiply,
    .nb_remainder = nb_remainder,
    .nb_negative = nb_negative,
    .nb_positive = nb_positive,
    .nb_absolute = nb_absolute,
    .nb_invert = nb_invert,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_and = nb_and,
    .nb_xor = nb_xor,
    .nb_or = nb_or,
    .nb_floor_divide = nb_floor_divide,
    .nb_true_divide = nb_true_divide,
};

/* ``a < b`` ...: the traced comparison, else elementwise.compare (== None is all False). */
PyObject *nl_handle_richcompare(PyObject *self, PyObject *other, int op) {
    if (!installed)
        return not_installed();
    int which = op == Py_LT   ? OP_LT
                : op == Py_LE ? OP_LE
                : op == Py_EQ ? OP_EQ
                : op == Py_NE ? OP_NE
                : op == Py_GT ? OP_GT
                              : OP_GE;
    PyObject *args[2] = {self, other};
    PyObject *made = plain(op_ufuncs[which], args, 2);
    if (made != NULL || PyErr_Occurred())
        return made;
    PyObject *call[3] = {op_ufuncs[which], self, other};
    return PyObject_Vectorcall(compare_py, call, 3, NULL);
}

/* --- numloom's ufuncs ---------------------------------------------------------------------- */

/* The base of api/ufuncs.py's ``ufunc``: its call (``numloom.exp(x)``) takes the traced fast
 * path in C, and anything else the Python call (``ufunc._python_call``). */
static int is_numloom_array(PyObject *v) {
    if (PyObject_TypeCheck(v, ArrayType) || PyObject_TypeCheck(v, ScalarType))
        return 1;
    if (PyTuple_Check(v))
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); i++)
            if (PyObject_TypeCheck(PyTuple_GET_ITEM(v, i), ArrayType))
                return 1;
    return 0;
}

/* Whether a call's operands are all Python or NumPy scalars (``x[i]`` gives NumPy's) and no
 * keyword holds a numloom array: api/ufuncs.py's ``_scalars_only``. 1, 0, or -1 (an error). */
static int scalars_only(PyObject *args, PyObject *kwargs) {
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n == 0)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *t = Py_TYPE(PyTuple_GET_ITEM(args, i));
        if (t == ArrayType || t == ScalarType)
            return 0; /* (the common call: a numloom array, known without a lookup) */
        int in = PySet_Contains(host_scalars, (PyObject *)t);
        if (in <= 0)
            return in;
    }
    if (kwargs != NULL) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(kwargs, &pos, &key, &value))
            if (is_numloom_array(value))
                return 0;
    }
    return 1;
}

/* A count of a ufunc's (``nin``, ``nout``); -1 with an error set on failure. */
static Py_ssize_t ufunc_count(PyObject *self, PyObject *name) {
    PyObject *value = PyObject_GetAttr(self, name);
    if (value == NULL)
        return -1;
    Py_ssize_t n = PyLong_AsSsize_t(value);
    Py_DECREF(value);
    return n;
}

static PyObject *ufunc_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    if (installed) {
        /* Scalars alone: NumPy's ufunc, called from here so that its warnings point at the
         * user's line (no Python frame of numloom's between), its scalar back at once. */
        int scalars = scalars_only(args, kwargs);
        if (scalars < 0)
            return NULL;
        if (scalars) {
            PyObject *np_ufunc = PyObject_GetAttr(self, s_np);
            if (np_ufunc == NULL)
                return NULL;
            PyObject *out = PyObject_Call(np_ufunc, args, kwargs);
            Py_DECREF(np_ufunc);
            return out;
        }
    }
    /* ``out=a`` (or ``out=(a,)``) alone among the keywords: as ``a`` given last */
    PyObject *kw_out = NULL;
    if (installed && kwargs != NULL && PyDict_GET_SIZE(kwargs) == 1) {
        kw_out = PyDict_GetItemWithError(kwargs, PyTuple_GET_ITEM(out_kwnames, 0));
        if (kw_out == NULL && PyErr_Occurred())
            return NULL;
        if (kw_out != NULL && PyTuple_CheckExact(kw_out) && PyTuple_GET_SIZE(kw_out) == 1)
            kw_out = PyTuple_GET_ITEM(kw_out, 0);
        if (kw_out != NULL && !Py_IS_TYPE(kw_out, ArrayType))
            kw_out = NULL; /* (None, or not numloom's: the Python path) */
        if (kw_out != NULL) { /* (one output only: ``divmod``'s out= takes the Python path,
                               * which gives NumPy's errors for a tuple of one entry) */
            Py_ssize_t outputs = ufunc_count(self, s_nout);
            if (outputs == -1 && PyErr_Occurred())
                return NULL;
            if (outputs != 1)
                kw_out = NULL;
        }
    }
    if (installed && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0 || kw_out != NULL)) {
        Py_ssize_t want = ufunc_count(self, s_nin);
        if (want == -1 && PyErr_Occurred())
            return NULL;
        Py_ssize_t given = PyTuple_GET_SIZE(args);
        if (want == given && kw_out == NULL) {
            PyObject *made = plain(self, &PyTuple_GET_ITEM(args, 0), want);
            if (made != NULL || PyErr_Occurred())
                return made;
        } else if (kw_out == NULL ? given == want + 1 && given <= 3 : given == want && given <= 2) {
            /* ``np.add(a, b, a)`` (or ``out=a``) into an array of a data-dependent loop:
             * NumPy's call now (api/eager.py's ``into``), or the Python path */
            PyObject *out = kw_out != NULL ? kw_out : PyTuple_GET_ITEM(args, want);
            if (Py_IS_TYPE(out, ArrayType) && ((Handle *)out)->storage != NULL &&
                SLOT(((Handle *)out)->storage, off_eager) == Py_True) {
                PyObject *call[4] = {self, NULL, NULL, NULL};
                for (Py_ssize_t i = 0; i < want; i++)
                    call[i + 1] = PyTuple_GET_ITEM(args, i);
                call[want + 1] = out;
                PyObject *now = eager_into(self, call + 1, want);
                if (now != NULL || PyErr_Occurred())
                    return now;
                PyObject *made = PyObject_Vectorcall(eager_into_py, call, want + 2, NULL);
                if (made == NULL || made != Py_None)
                    return made;
                Py_DECREF(made);
            }
        }
    }
    PyObject *call = PyObject_GetAttr((PyObject *)Py_TYPE(self), s_python_call);
    if (call == NULL)
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(args);
    PyObject *full = PyTuple_New(count + 1);
    if (full == NULL) {
        Py_DECREF(call);
        return NULL;
    }
    PyTuple_SET_ITEM(full, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < count; i++)
        PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    PyObject *out = PyObject_Call(call, full, kwargs);
    Py_DECREF(full);
    Py_DECREF(call);
    return out;
}

PyTypeObject nl_ufunc_base = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numloom.core._speedups.UfuncBase",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The base of numloom's ufuncs: their plain call, in C.",
    .tp_call = ufunc_call,
    .tp_new = PyType_GenericNew,
};

/* --- the walk at a sync -------------------------------------------------------------------- */

/* Positions of placed nodes by address: an open-addressing table (no Python objects made). */
typedef struct {
    void **keys;
    Py_ssize_t *values;
    size_t mask, used;
} Table;

static size_t table_slot(const Table *t, void *key) {
    size_t h = ((size_t)key >> 4) * 0x9E3779B97F4A7C15ull;
    size_t i = (h >> 17) & t->mask;
    while (t->keys[i] != NULL && t->keys[i] != key)
        i = (i + 1) & t->mask;
    return i;
}

static int table_grow(Table *t) {
    Table bigger = {NULL, NULL, t->mask ? 2 * t->mask + 1 : 255, 0};
    bigger.keys = PyMem_Calloc(bigger.mask + 1, sizeof(void *));
    bigger.values = PyMem_Malloc((bigger.mask + 1) * sizeof(Py_ssize_t));
    if (bigger.keys == NULL || bigger.values == NULL) {
        PyMem_Free(bigger.keys);
        PyMem_Free(bigger.values);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; t->keys != NULL && i <= t->mask; i++) {
        if (t->keys[i] != NULL) {
            size_t j = table_slot(&bigger, t->keys[i]);
            bigger.keys[j] = t->keys[i];
            bigger.values[j] = t->values[i];
            bigger.used++;
        }
    }
    PyMem_Free(t->keys);
    PyMem_Free(t->values);
    *t = bigger;
    return 0;
}

/* Small position numbers, made once: a DAG's key holds many. */
#define POSITIONS 8192
static PyObject *position_objects[POSITIONS];

static PyObject *position(Py_ssize_t at) {
    if (at >= POSITIONS)
        return PyLong_FromSsize_t(at);
    if (position_objects[at] == NULL && (position_objects[at] = PyLong_FromSsize_t(at)) == NULL)
        return NULL;
    return Py_NewRef(position_objects[at]);
}

typedef struct {
    Table table;
    PyObject *order, *items;
} Walk;

/* dag.structure's recursion (``_place``): ``n`` and its unplaced sources, sources first;
 * returns n's position (-1 on error). */
static Py_ssize_t place(Walk *w, PyObject *n) {
    if (!Py_IS_TYPE(n, NodeType)) {
        PyErr_SetString(PyExc_TypeError, "numloom: a DAG holds something that is not a node");
        return -1;
    }
    PyObject *srcs = SLOT(n, off_srcs), *sid = SLOT(n, off_sid);
    if (srcs == NULL || sid == NULL || !PyTuple_Check(srcs)) {
        PyErr_SetString(PyExc_TypeError, "numloom: a node without its fields");
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(srcs);
    PyObject *item = count ? PyTuple_New(count + 1) : Py_NewRef(sid);
    if (item == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *s = PyTuple_GET_ITEM(srcs, i);
        size_t slot = table_slot(&w->table, s);
        Py_ssize_t at = w->table.keys[slot] == s ? w->table.values[slot] : place(w, s);
        PyObject *p = at < 0 ? NULL : position(at);
        if (p == NULL) {
            Py_DECREF(item);
            return -1;
        }
        PyTuple_SET_ITEM(item, i + 1, p);
    }
    if (count)
        PyTuple_SET_ITEM(item, 0, Py_NewRef(sid));
    Py_ssize_t at = PyList_GET_SIZE(w->order);
    if ((w->table.used + 1) * 2 > w->table.mask && table_grow(&w->table) < 0) {
        Py_DECREF(item);
        return -1;
    }
    size_t slot = table_slot(&w->table, n);
    w->table.keys[slot] = n;
    w->table.values[slot] = at;
    w->table.used++;
    int failed = PyList_Append(w->order, n) < 0 || PyList_Append(w->items, item) < 0;
    Py_DECREF(item);
    return failed ? -1 : at;
}

/* structure(roots): ``(order, key)`` as dag.structure makes them (its positions are made from
 * ``order`` when a caller needs them), for a DAG no deeper than the recursion allows (dag.py
 * sorts deeper ones with an explicit stack). */
static PyObject *structure(PyObject *module, PyObject *roots) {
    if (!installed || !PyList_Check(roots)) {
        PyErr_SetString(PyExc_TypeError, "structure(roots) takes a list of nodes");
        return NULL;
    }
    Walk w = {{NULL, NULL, 0, 0}, PyList_New(0), PyList_New(0)};
    PyObject *rootpos = PyTuple_New(PyList_GET_SIZE(roots));
    PyObject *out = NULL;
    if (w.order == NULL || w.items == NULL || rootpos == NULL || table_grow(&w.table) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(roots); i++) {
        PyObject *r = PyList_GET_ITEM(roots, i);
        size_t slot = table_slot(&w.table, r);
        Py_ssize_t at = w.table.keys[slot] == r ? w.table.values[slot] : place(&w, r);
        PyObject *p = at < 0 ? NULL : position(at);
        if (p == NULL)
            goto done;
        PyTuple_SET_ITEM(rootpos, i, p);
    }
    PyObject *items = PyList_AsTuple(w.items);
    if (items == NULL)
        goto done;
    out = Py_BuildValue("(O(NO))", w.order, items, rootpos);
done:
    PyMem_Free(w.table.keys);
    PyMem_Free(w.table.values);
    Py_XDECREF(w.order);
    Py_XDECREF(w.items);
    Py_XDECREF(rootpos);
    return out;
}

/* map_result(name, operands, loop, shape): the traced MAP ``name`` of ``operands`` (arrays of
 * numloom's own classes, or Python scalars) read as ``loop``'s input dtypes and broadcast to
 * ``shape``, giving ``loop[-1]``: a new array (on the first array operand's device) whose value
 * is that node. The caller has checked the call as NumPy would (api/elementwise.py's
 * ``where``). */
static PyObject *map_result(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs != 4 || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyTuple_Check(args[2]) || !PyTuple_CheckExact(args[3]) ||
        PyTuple_GET_SIZE(args[2]) != PyTuple_GET_SIZE(args[1]) + 1) {
        PyErr_SetString(PyExc_TypeError, "map_result(name, operands, loop, shape)");
        return NULL;
    }
    PyObject *operands = args[1], *loop = args[2], *shape = args[3], *device = NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(operands);
    for (Py_ssize_t i = 0; i < count && device == NULL; i++) {
        PyObject *x = PyTuple_GET_ITEM(operands, i);
        if ((Py_TYPE(x) == ArrayType || Py_TYPE(x) == ScalarType) && ((Handle *)x)->storage)
            device = SLOT(((Handle *)x)->storage, off_device);
    }
    if (device == NULL) {
        PyErr_SetString(PyExc_TypeError, "map_result: no operand is a numloom array");
        return NULL;
    }
    return traced_map(&PyTuple_GET_ITEM(operands, 0), count, loop, args[0], shape, device, 0);
}

/* --- pending storages ---------------------------------------------------------------------- */

/* sweep(refs): the live storages of ``refs`` ({id: weak reference}, realize._Pending's), its
 * entries of dead ones removed. No Python code runs meanwhile, so no other thread changes
 * ``refs`` during the sweep. */
static PyObject *sweep(PyObject *module, PyObject *refs) {
    if (!PyDict_CheckExact(refs)) {
        PyErr_SetString(PyExc_TypeError, "sweep(refs) takes a dict");
        return NULL;
    }
    PyObject *live = PyList_New(0), *dead = PyList_New(0);
    if (live == NULL || dead == NULL)
        goto failed;
    Py_ssize_t at = 0;
    PyObject *key, *ref;
    while (PyDict_Next(refs, &at, &key, &ref)) {
        PyObject *obj = PyWeakref_Check(ref) ? nl_referent(ref) : NULL;
        if (PyList_Append(obj == NULL ? dead : live, obj == NULL ? key : obj) < 0)
            goto failed;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dead); i++)
        if (PyDict_DelItem(refs, PyList_GET_ITEM(dead, i)) < 0)
            goto failed;
    Py_DECREF(dead);
    return live;
failed:
    Py_XDECREF(live);
    Py_XDECREF(dead);
    return NULL;
}

/* call_states(order, positions): the error states (fperrors.record's ``call[0]``) of the
 * nodes at ``positions`` of ``order``, each run of one state given once (most kernels' nodes
 * were all called under one state): what fperrors.reported looks at, for every launch. */
static PyObject *call_states(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!installed || nargs != 2 || !PyList_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "call_states(order, positions)");
        return NULL;
    }
    PyObject *order = args[0], *positions = args[1], *last = NULL;
    PyObject *states = PyList_New(0);
    if (states == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(positions); i++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, i));
        if (p < 0 || p >= PyList_GET_SIZE(order)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_IndexError, "call_states: a position outside the DAG");
            Py_DECREF(states);
            return NULL;
        }
        PyObject *n = PyList_GET_ITEM(order, p);
        if (!Py_IS_TYPE(n, NodeType))
            continue;
        PyObject *call = SLOT(n, off_call);
        if (call == NULL || !PyTuple_Check(call) || PyTuple_GET_SIZE(call) < 1)
            continue;
        PyObject *state = PyTuple_GET_ITEM(call, 0);
        if (state != last) {
            last = state;
            if (PyList_Append(states, state) < 0) {
                Py_DECREF(states);
                return NULL;
            }
        }
    }
    return states;
}

/* --- the launch of a compiled CPU kernel --------------------------------------------------- */

typedef void (*kernel_fn)(void *, void *, void *);

/* launch(address, arrays, params, constants): call the compiled kernel at ``address`` with
 * the data pointers of ``arrays`` (NumPy arrays, C-contiguous: its inputs, outputs and flag
 * words), the address of its int64 parameters and its constant block (bytes), as
 * backends/cpu.py's ctypes call does, without ctypes' conversions. The GIL is released while
 * the kernel runs (other threads trace meanwhile). */
static PyObject *launch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[1]) || !PyBytes_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "launch(address, arrays, params, constants)");
        return NULL;
    }
    void *fn = PyLong_AsVoidPtr(args[0]);
    void *params = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (fn == NULL) {
        PyErr_SetString(PyExc_ValueError, "launch: no kernel at address 0");
        return NULL;
    }
    PyObject *arrays = args[1];
    Py_ssize_t count = PyList_GET_SIZE(arrays);
    void *local[64];
    void **pointers = count <= 64 ? local : PyMem_Malloc(count * sizeof(void *));
    if (pointers == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_buffer view;
        if (PyObject_GetBuffer(PyList_GET_ITEM(arrays, i), &view, PyBUF_ANY_CONTIGUOUS) < 0) {
            if (pointers != local)
                PyMem_Free(pointers);
            return NULL;
        }
        pointers[i] = view.buf; /* (the list keeps the array, and so its memory, alive) */
        PyBuffer_Release(&view);
    }
    void *constants = PyBytes_AS_STRING(args[3]);
    PyObject *keep = Py_NewRef(args[3]);
    Py_BEGIN_ALLOW_THREADS
    ((kernel_fn)fn)(pointers, params, constants);
    Py_END_ALLOW_THREADS
    Py_DECREF(keep);
    if (pointers != local)
        PyMem_Free(pointers);
    Py_RETURN_NONE;
}

static PyObject *user_line_call(PyObject *module, PyObject *unused) {
    return user_line();
}

/* --- iteration over a 1-d array (host.py's _elements) ---------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *storage; /* the array's storage */
    PyObject *version; /* the version ``host`` shows */
    PyObject *host;    /* the array's host view: a NumPy array */
    PyObject *refresh; /* the array's ``_host_view`` */
    Py_ssize_t i, n;
} ElementIter;

static void element_iter_dealloc(ElementIter *it) {
    Py_XDECREF(it->storage);
    Py_XDECREF(it->version);
    Py_XDECREF(it->host);
    Py_XDECREF(it->refresh);
    PyObject_Free(it);
}

/* The next element, a NumPy scalar read from the host view; read again from a new host view
 * when a write in the loop's body made a new version of the storage. */
static PyObject *element_iter_next(ElementIter *it) {
    if (it->i >= it->n)
        return NULL;
    if (SLOT(it->storage, off_version) != it->version) {
        PyObject *host = PyObject_CallNoArgs(it->refresh);
        if (host == NULL)
            return NULL;
        Py_SETREF(it->host, host);
        Py_XSETREF(it->version, Py_XNewRef(SLOT(it->storage, off_version)));
    }
    return PySequence_GetItem(it->host, it->i++);
}

static PyTypeObject ElementIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numloom.core._speedups.elements",
    .tp_basicsize = sizeof(ElementIter),
    .tp_dealloc = (destructor)element_iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Iteration over a 1-d numloom array (host.py's _elements).",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)element_iter_next,
};

static PyObject *elements(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || StorageType == NULL || !Py_IS_TYPE(args[0], StorageType)) {
        PyErr_SetString(PyExc_TypeError, "elements(storage, host, refresh): a numloom storage "
                                         "(after install_tracing), its host view, a callable");
        return NULL;
    }
    if (ElementIterType.tp_dict == NULL && PyType_Ready(&ElementIterType) < 0)
        return NULL;
    Py_ssize_t n = PySequence_Length(args[1]);
    if (n < 0)
        return NULL;
    ElementIter *it = PyObject_New(ElementIter, &ElementIterType);
    if (it == NULL)
        return NULL;
    it->storage = Py_NewRef(args[0]);
    it->version = Py_XNewRef(SLOT(args[0], off_version));
    it->host = Py_NewRef(args[1]);
    it->refresh = Py_NewRef(args[2]);
    it->i = 0;
    it->n = n;
    return (PyObject *)it;
}

PyMethodDef nl_tracing_methods[] = {
    {"function_now", (PyCFunction)(void (*)(void))function_now, METH_FASTCALL,
     "function_now(np_fn, args): api/eager.py's function_now for a loop's small arrays, or None"},
    {"adopt", (PyCFunction)(void (*)(void))adopt_call, METH_FASTCALL,
     "adopt(data, eager=True): a new CPU array whose memory is NumPy's new array data "
     "(api/eager.py; array.adopt_host, unmarked)."},
    {"result", (PyCFunction)(void (*)(void))result_call, METH_FASTCALL,
     "result(node, device): a new array whose value is the node (array.result)."},
    {"intern", (PyCFunction)(void (*)(void))intern_call, METH_FASTCALL,
     "intern(op, srcs, arg, shape, dtype, where, shape_key, arg_key): dag._intern."},
    {"call_states", (PyCFunction)(void (*)(void))call_states, METH_FASTCALL,
     "call_states(order, positions): the error states of those nodes' calls, runs once."},
    {"map_result", (PyCFunction)(void (*)(void))map_result, METH_FASTCALL,
     "map_result(name, operands, loop, shape): a traced MAP node's new array."},
    {"sweep", sweep, METH_O,
     "sweep(refs): the live storages of a {id: weakref} dict, dead entries removed."},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(address, arrays, params, constants): run a compiled CPU kernel (backends/cpu.py)."},
    {"install_tracing", install_tracing, METH_O,
     "install_tracing(objects): the classes, dicts and Python paths of the traced operation."},
    {"plain_call", (PyCFunction)(void (*)(void))plain_call, METH_FASTCALL,
     "plain_call(uf, args): a traced ufunc call's fast path (api/ufuncs.py's _plain_call)."},
    {"structure", structure, METH_O,
     "structure(roots): (order, key) of a DAG (dag.structure)."},
    {"user_line", user_line_call, METH_NOARGS,
     "user_line(): (file, line) of the first caller outside numloom, or None (dag.user_line)."},
    {"elements", (PyCFunction)(void (*)(void))elements, METH_FASTCALL,
     "elements(storage, host, refresh): an iterator over a 1-d array's elements (host.py)."},
    {NULL, NULL, 0, NULL},
};
