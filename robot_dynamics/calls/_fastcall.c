/* robot_dynamics._fastcall: a quantity's call for one state, from Python straight into its compiled kernel.
 *
 * A route written in Python costs ~0.6 us before its kernel starts (argument checks, attribute look-ups,
 * allocating the result) and numba's entry into the kernel ~0.15 us more: as long as Pinocchio's whole call on a
 * small robot.  A Call does that work in C, knowing nothing of what it computes: arrays in, arrays out.  It checks
 * the state arguments (exact float64 ndarrays of the sizes it was given, C-contiguous, aligned) and `out` (no out
 * may overlap an input or another out), takes the constant input its key arguments select (a nested table of
 * arrays, or the one remembered for a sequence of the very same elements), allocates the results, and calls the
 * kernel's C entry point (generated.fast_kernel: a numba cfunc around the kernel with its result checks) with the
 * data pointers and shapes.  Anything else -- a batch, a list, a strided view, another dtype, a keyword other than
 * out, an unknown key, an overlapping `out`, a kernel that reports an error -- goes to the route written in Python
 * (`function`), which computes it or raises the error naming the culprit: a Call never decides anything on its own.
 *
 * methods.Calls makes a Call the entry of a registry row at its first use; the Call holds its Python route only
 * weakly (no reference cycle) and the arrays its kernel reads (bodies, workspace, per-robot arrays, gravity)
 * strongly.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stddef.h>
#include <string.h>

#define MAX_ARRAYS 24           /* fixed arrays + inputs + outputs of one kernel */
#define MAX_DIMS 128            /* their shapes and strides */
#define MAX_INPUTS 8
#define MAX_OUTPUTS 6
#define MAX_NDIM 4

typedef long long i64;
/* generated.fast_kernel's C signature: pointers to the body records and workspace, then the other arrays' data
   pointers in the kernel's argument order, and dims: nb, then every array's shape (all are C-contiguous).
   Returns the kernel's status (0: success). */
typedef i64 (*kernel_t)(void *bodies, void *work, void **pointers, i64 *dims);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_t kernel;
    PyObject *fixed;            /* tuple (bodies, work, *arrays, [gravity]): kept alive for the kernel */
    PyObject *function;         /* the route written in Python, called as function(owner, *args, **kwargs) */
    PyObject *owner;            /* weak reference to its owner (quantity.Quantity) */
    int keys;                   /* how many arguments after the state select the constant input (0: none) */
    PyObject *table;            /* NULL, or nested dicts: table[key_1]...[key_keys] is the constant input */
    PyObject *last_key;         /* NULL, or the tuple of the remembered key's elements (`remember`) */
    PyObject *last_constant;    /* the constant input of the remembered key */
    PyObject *result_type;      /* NULL, or a class: the results returned as result_type(*results), and an `out`
                                   of that class exactly, whose attributes `fields` receive them (any further
                                   field must be None) */
    PyObject *fields;           /* tuple of str */
    int n_inputs;
    npy_intp input_size[MAX_INPUTS];
    int n_outputs;
    int output_ndim[MAX_OUTPUTS];
    npy_intp output_shape[MAX_OUTPUTS][MAX_NDIM];
    int scalar;                 /* one output of shape (): computed into a (1,) array, returned as a numpy scalar */
    int n_fixed;                /* pointers in fixed_pointers (arrays and gravity) */
    void *fixed_pointers[MAX_ARRAYS];
    int n_fixed_dims;
    i64 fixed_dims[MAX_DIMS];
} Call;

static PyArray_Descr *float64;
static PyObject *str_out;

static int native_float64(PyArrayObject *a)
{
    /* a holds native float64: the dtype singleton, or an equal dtype object (numba returns arrays with its own) */
    PyArray_Descr *d = PyArray_DESCR(a);
    return d == float64 || (d->type_num == NPY_DOUBLE && PyArray_ISNBO(d->byteorder));
}

static int matches(PyObject *x, int ndim, const npy_intp *shape, int writeable)
{
    /* x is an exact float64 ndarray (native byte order) of this shape, C-contiguous and aligned: what the kernel,
       compiled for that layout, can read (and write, if writeable). */
    if (!PyArray_CheckExact(x))
        return 0;
    PyArrayObject *a = (PyArrayObject *)x;
    if (!native_float64(a) || PyArray_NDIM(a) != ndim || !PyArray_ISALIGNED(a)
        || !PyArray_IS_C_CONTIGUOUS(a))
        return 0;
    if (writeable && !PyArray_ISWRITEABLE(a))
        return 0;
    for (int i = 0; i < ndim; i++)
        if (PyArray_DIM(a, i) != shape[i])
            return 0;
    return 1;
}

static int usable(PyObject *x)
{
    /* x can be a constant input: an exact float64 ndarray, C-contiguous and aligned, of any shape */
    return PyArray_CheckExact(x) && native_float64((PyArrayObject *)x)
        && PyArray_ISALIGNED((PyArrayObject *)x) && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)x);
}

/* [*lo, *hi): the bytes the elements of array a may occupy (np.may_share_memory's bounds); lo = hi when a has no
   element, and such an extent overlaps nothing (any_overlap), as in numpy. */
static void extent(PyArrayObject *a, char **lo, char **hi)
{
    char *l = PyArray_BYTES(a), *h = l + PyArray_ITEMSIZE(a);
    if (PyArray_SIZE(a) == 0) {
        *lo = *hi = l;
        return;
    }
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp reach = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
        if (reach < 0)
            l += reach;
        else
            h += reach;
    }
    *lo = l;
    *hi = h;
}

/* 1 when an output among given[first:n] may share bytes with an array before it in given (the inputs, then the
   outputs before it): np.may_share_memory's bounds test, which native.extents_overlap calls without the extension.
   What a Call compares before its kernel (whose entry point does not, generated.fast_source) and `overlapping` for
   whole batches. */
static int any_overlap(PyArrayObject **given, int first, int n)
{
    char *lo[MAX_ARRAYS], *hi[MAX_ARRAYS];
    for (int i = 0; i < n; i++)
        extent(given[i], &lo[i], &hi[i]);
    for (int i = first; i < n; i++)
        for (int j = 0; j < i; j++)
            if (lo[i] < hi[j] && lo[j] < hi[i] && lo[i] < hi[i] && lo[j] < hi[j])
                return 1;
    return 0;
}

static void add_array(PyArrayObject *a, void **pointers, int *p, i64 *dims, int *d)
{
    int ndim = PyArray_NDIM(a);
    pointers[(*p)++] = PyArray_DATA(a);
    for (int i = 0; i < ndim; i++)
        dims[(*d)++] = PyArray_DIM(a, i);
}

static int same_elements(PyObject *key, PyObject *x)
{
    /* x is a tuple or list of the very objects of the tuple key */
    if (key == NULL || !(PyTuple_CheckExact(x) || PyList_CheckExact(x)) || Py_SIZE(x) != PyTuple_GET_SIZE(key))
        return 0;
    PyObject **items = PyTuple_CheckExact(x) ? ((PyTupleObject *)x)->ob_item : ((PyListObject *)x)->ob_item;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++)
        if (items[i] != PyTuple_GET_ITEM(key, i))
            return 0;
    return 1;
}

static PyObject *constant_of(Call *self, PyObject *const *keys)
{
    /* The constant input the key arguments select (borrowed), or NULL, no error set: the table's entry -- a dict
       look-up per key, whose str hashes are cached -- else, for one key, the remembered constant when the key is a
       tuple or list of the remembered elements (a key that cannot be hashed, such as a list). */
    if (self->table != NULL) {
        PyObject *x = self->table;
        for (int i = 0; x != NULL && i < self->keys; i++) {
            x = PyDict_CheckExact(x) ? PyDict_GetItemWithError(x, keys[i]) : NULL;
            if (x == NULL && PyErr_Occurred())
                PyErr_Clear();                                      /* an unhashable key, say */
        }
        if (x != NULL)
            return usable(x) ? x : NULL;
    }
    if (self->keys == 1 && same_elements(self->last_key, keys[0]))
        return self->last_constant;
    return NULL;
}

static PyObject *fall_back(Call *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *owner = PyWeakref_GetObject(self->owner);          /* borrowed */
    if (owner == NULL)
        return NULL;
    if (owner == Py_None) {
        PyErr_SetString(PyExc_ReferenceError, "the Robot of this quantity no longer exists");
        return NULL;
    }
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *small[16], **all = small;
    if (nargs + nkw + 1 > 16) {
        all = PyMem_Malloc((nargs + nkw + 1) * sizeof(PyObject *));
        if (all == NULL)
            return PyErr_NoMemory();
    }
    Py_INCREF(owner);
    all[0] = owner;
    memcpy(all + 1, args, (nargs + nkw) * sizeof(PyObject *));
    PyObject *result = PyObject_Vectorcall(self->function, all, nargs + 1, kwnames);
    Py_DECREF(owner);
    if (all != small)
        PyMem_Free(all);
    return result;
}

static PyObject *call(Call *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int n = self->n_inputs, k = self->keys;
    PyObject *out = NULL, *x;

    /* the signature: (*inputs, *keys, out=None) */
    if (nargs < n + k || nargs > n + k + 1)
        return fall_back(self, args, nargsf, kwnames);
    if (nargs > n + k)
        out = args[n + k];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        if (out == NULL && (key == str_out || PyUnicode_Compare(key, str_out) == 0))
            out = args[nargs + i];
        else
            return fall_back(self, args, nargsf, kwnames);       /* unknown or repeated: Python's own error */
    }

    void *pointers[MAX_ARRAYS];
    i64 dims[MAX_DIMS];
    PyArrayObject *given[MAX_ARRAYS];      /* the inputs (the constant input last), then the outputs */
    int p = self->n_fixed, d = self->n_fixed_dims, n_given = 0;
    memcpy(pointers, self->fixed_pointers, p * sizeof(void *));
    memcpy(dims, self->fixed_dims, d * sizeof(i64));
    for (int i = 0; i < n; i++) {
        if (!matches(args[i], 1, &self->input_size[i], 0))
            return fall_back(self, args, nargsf, kwnames);
        add_array((PyArrayObject *)args[i], pointers, &p, dims, &d);
        given[n_given++] = (PyArrayObject *)args[i];
    }
    if (k > 0) {
        x = constant_of(self, args + n);
        if (x == NULL)                                              /* an unknown key: the route says so */
            return fall_back(self, args, nargsf, kwnames);
        add_array((PyArrayObject *)x, pointers, &p, dims, &d);
        given[n_given++] = (PyArrayObject *)x;
    }

    PyObject *results[MAX_OUTPUTS];
    int allocated = out == NULL || out == Py_None;
    if (allocated) {
        for (int j = 0; j < self->n_outputs; j++) {
            results[j] = PyArray_SimpleNew(self->output_ndim[j], self->output_shape[j], NPY_DOUBLE);
            if (results[j] == NULL) {
                for (int m = 0; m < j; m++)
                    Py_DECREF(results[m]);
                return NULL;
            }
        }
    }
    else if (self->scalar)
        return fall_back(self, args, nargsf, kwnames);
    else if (self->result_type != NULL) {
        if ((PyObject *)Py_TYPE(out) != self->result_type)
            return fall_back(self, args, nargsf, kwnames);
        Py_ssize_t n_fields = PyTuple_GET_SIZE(self->fields);
        for (Py_ssize_t j = 0; j < n_fields; j++) {
            x = PyObject_GetAttr(out, PyTuple_GET_ITEM(self->fields, j));
            if (x == NULL) {
                PyErr_Clear();
                return fall_back(self, args, nargsf, kwnames);
            }
            Py_DECREF(x);                                          /* out holds it */
            if (j < self->n_outputs)
                results[j] = x;
            else if (x != Py_None)
                return fall_back(self, args, nargsf, kwnames);
        }
    }
    else if (self->n_outputs == 1)
        results[0] = out;
    else {
        if (!PyTuple_CheckExact(out) || PyTuple_GET_SIZE(out) != self->n_outputs)
            return fall_back(self, args, nargsf, kwnames);
        for (int j = 0; j < self->n_outputs; j++)
            results[j] = PyTuple_GET_ITEM(out, j);
    }
    if (!allocated) {
        for (int j = 0; j < self->n_outputs; j++) {
            if (!matches(results[j], self->output_ndim[j], self->output_shape[j], 1))
                return fall_back(self, args, nargsf, kwnames);
            given[n_given + j] = (PyArrayObject *)results[j];
        }
        if (any_overlap(given, n_given, n_given + self->n_outputs))     /* refused, or computed apart: Python */
            return fall_back(self, args, nargsf, kwnames);
    }
    for (int j = 0; j < self->n_outputs; j++)
        add_array((PyArrayObject *)results[j], pointers, &p, dims, &d);

    PyArrayObject *bodies = (PyArrayObject *)PyTuple_GET_ITEM(self->fixed, 0);
    PyArrayObject *work = (PyArrayObject *)PyTuple_GET_ITEM(self->fixed, 1);
    i64 status = self->kernel(PyArray_DATA(bodies), PyArray_DATA(work), pointers, dims);
    if (status != 0) {                                             /* the route says what went wrong */
        if (allocated)
            for (int j = 0; j < self->n_outputs; j++)
                Py_DECREF(results[j]);
        return fall_back(self, args, nargsf, kwnames);
    }
    if (!allocated) {                                              /* out itself, as the routes return it */
        Py_INCREF(out);
        return out;
    }
    if (self->result_type != NULL) {
        PyObject *value = PyObject_Vectorcall(self->result_type, results, self->n_outputs, NULL);
        for (int j = 0; j < self->n_outputs; j++)
            Py_DECREF(results[j]);
        return value;
    }
    if (self->scalar) {
        PyArrayObject *a = (PyArrayObject *)results[0];
        PyObject *value = PyArray_Scalar(PyArray_DATA(a), PyArray_DESCR(a), results[0]);
        Py_DECREF(results[0]);
        return value;
    }
    if (self->n_outputs == 1)
        return results[0];
    PyObject *tuple = PyTuple_New(self->n_outputs);
    if (tuple == NULL) {
        for (int j = 0; j < self->n_outputs; j++)
            Py_DECREF(results[j]);
        return NULL;
    }
    for (int j = 0; j < self->n_outputs; j++)
        PyTuple_SET_ITEM(tuple, j, results[j]);
    return tuple;
}

static int shape_of(PyObject *shape, int *ndim, npy_intp *dims)
{
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > MAX_NDIM) {
        PyErr_SetString(PyExc_ValueError, "a shape must be a tuple of at most 4 ints");
        return -1;
    }
    *ndim = (int)PyTuple_GET_SIZE(shape);
    for (int i = 0; i < *ndim; i++) {
        dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (dims[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

static int output_shapes(Call *self, PyObject *shapes)
{
    /* the outputs' shapes (a tuple of shapes, one per output); a single output of shape () is a scalar, which
       the kernel writes as a 1-vector */
    if (!PyTuple_Check(shapes) || PyTuple_GET_SIZE(shapes) < 1 || PyTuple_GET_SIZE(shapes) > MAX_OUTPUTS) {
        PyErr_SetString(PyExc_ValueError, "output_shapes must be a tuple of 1 to 6 shapes");
        return -1;
    }
    self->n_outputs = (int)PyTuple_GET_SIZE(shapes);
    for (int j = 0; j < self->n_outputs; j++)
        if (shape_of(PyTuple_GET_ITEM(shapes, j), &self->output_ndim[j], self->output_shape[j]) < 0)
            return -1;
    self->scalar = self->n_outputs == 1 && self->output_ndim[0] == 0;
    if (self->scalar) {
        self->output_ndim[0] = 1;
        self->output_shape[0][0] = 1;
    }
    return 0;
}

static PyObject *call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    /* Call(address, fixed, input_sizes, output_shapes, function, owner, keys=0, table=None, result_type=None,
            fields=()) */
    static char *names[] = {"address", "fixed", "input_sizes", "output_shapes", "function", "owner", "keys",
                            "table", "result_type", "fields", NULL};
    PyObject *address, *fixed, *sizes, *shapes, *function, *owner, *table = Py_None, *result_type = Py_None;
    PyObject *fields = NULL;
    int keys = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!O!OO|iOOO!", names, &address, &PyTuple_Type, &fixed,
                                     &PyTuple_Type, &sizes, &PyTuple_Type, &shapes, &function, &owner, &keys,
                                     &table, &result_type, &PyTuple_Type, &fields))
        return NULL;
    if (result_type != Py_None && (fields == NULL || PyTuple_GET_SIZE(fields) < PyTuple_GET_SIZE(shapes))) {
        PyErr_SetString(PyExc_ValueError, "a result_type needs a field name per output");
        return NULL;
    }
    if (PyTuple_GET_SIZE(fixed) < 2 || PyTuple_GET_SIZE(fixed) - 2 + PyTuple_GET_SIZE(sizes) + (keys > 0)
            + PyTuple_GET_SIZE(shapes) > MAX_ARRAYS || PyTuple_GET_SIZE(sizes) > MAX_INPUTS) {
        PyErr_SetString(PyExc_ValueError, "too many (or too few) arrays for a Call");
        return NULL;
    }
    if (keys < 0 || keys > 4 || (table != Py_None && (!PyDict_Check(table) || keys == 0))) {
        PyErr_SetString(PyExc_ValueError, "keys must be 0 to 4, and a table a dict of them");
        return NULL;
    }
    Call *self = (Call *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)call;
    self->keys = keys;
    self->kernel = (kernel_t)PyLong_AsVoidPtr(address);
    if (self->kernel == NULL && PyErr_Occurred())
        goto fail;
    self->n_inputs = (int)PyTuple_GET_SIZE(sizes);
    for (int i = 0; i < self->n_inputs; i++) {
        self->input_size[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(sizes, i));
        if (self->input_size[i] == -1 && PyErr_Occurred())
            goto fail;
    }
    if (output_shapes(self, shapes) < 0)
        goto fail;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fixed); i++) {
        PyObject *x = PyTuple_GET_ITEM(fixed, i);
        if (!PyArray_Check(x) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)x)) {
            PyErr_SetString(PyExc_TypeError, "the fixed arrays of a Call must be C-contiguous ndarrays");
            goto fail;
        }
    }
    self->fixed_dims[self->n_fixed_dims++] = PyArray_DIM((PyArrayObject *)PyTuple_GET_ITEM(fixed, 0), 0);
    for (Py_ssize_t i = 2; i < PyTuple_GET_SIZE(fixed); i++) {   /* C-contiguous: their shapes alone */
        PyArrayObject *a = (PyArrayObject *)PyTuple_GET_ITEM(fixed, i);
        self->fixed_pointers[self->n_fixed++] = PyArray_DATA(a);
        for (int k = 0; k < PyArray_NDIM(a); k++)
            self->fixed_dims[self->n_fixed_dims++] = PyArray_DIM(a, k);
    }
    Py_INCREF(fixed);
    self->fixed = fixed;
    Py_INCREF(function);
    self->function = function;
    self->owner = PyWeakref_NewRef(owner, NULL);
    if (self->owner == NULL)
        goto fail;
    if (table != Py_None) {
        Py_INCREF(table);
        self->table = table;
    }
    if (result_type != Py_None) {
        Py_INCREF(result_type);
        self->result_type = result_type;
        Py_INCREF(fields);
        self->fields = fields;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static int call_traverse(Call *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fixed);
    Py_VISIT(self->function);
    Py_VISIT(self->owner);
    Py_VISIT(self->table);
    Py_VISIT(self->last_key);
    Py_VISIT(self->last_constant);
    Py_VISIT(self->result_type);
    Py_VISIT(self->fields);
    return 0;
}

static int call_clear(Call *self)
{
    Py_CLEAR(self->fixed);
    Py_CLEAR(self->function);
    Py_CLEAR(self->owner);
    Py_CLEAR(self->table);
    Py_CLEAR(self->last_key);
    Py_CLEAR(self->last_constant);
    Py_CLEAR(self->result_type);
    Py_CLEAR(self->fields);
    return 0;
}

static void call_dealloc(Call *self)
{
    PyObject_GC_UnTrack(self);
    call_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *call_remember(Call *self, PyObject *args)
{
    /* remember(key, constant, output_shapes): for one key argument, the constant input and the outputs' shapes
       of the key whose elements are those of the tuple `key`, used from now on when the Call is given a tuple or
       list of those very elements (a key that is not in the table, or cannot be hashed) */
    PyObject *key, *constant, *shapes;
    if (self->keys != 1)
        return PyErr_Format(PyExc_TypeError, "remember is for a Call of one key argument");
    if (!PyArg_ParseTuple(args, "O!OO!", &PyTuple_Type, &key, &constant, &PyTuple_Type, &shapes))
        return NULL;
    if (!usable(constant) || PyTuple_GET_SIZE(shapes) != self->n_outputs) {
        PyErr_SetString(PyExc_ValueError, "remember(key, constant, output_shapes): a C-contiguous float64 array, "
                        "a shape per output");
        return NULL;
    }
    npy_intp previous[MAX_OUTPUTS][MAX_NDIM];
    int previous_ndim[MAX_OUTPUTS], previous_scalar = self->scalar;
    memcpy(previous, self->output_shape, sizeof(previous));
    memcpy(previous_ndim, self->output_ndim, sizeof(previous_ndim));
    if (output_shapes(self, shapes) < 0) {                        /* unchanged when refused */
        memcpy(self->output_shape, previous, sizeof(previous));
        memcpy(self->output_ndim, previous_ndim, sizeof(previous_ndim));
        self->scalar = previous_scalar;
        return NULL;
    }
    Py_INCREF(key);
    Py_XSETREF(self->last_key, key);
    Py_INCREF(constant);
    Py_XSETREF(self->last_constant, constant);
    Py_RETURN_NONE;
}

static PyObject *call_get_remembered(Call *self, void *closure)
{
    PyObject *x = self->last_key ? self->last_key : Py_None;
    Py_INCREF(x);
    return x;
}

static PyMethodDef call_methods[] = {
    {"remember", (PyCFunction)call_remember, METH_VARARGS,
     "remember(key, constant, output_shapes): the constant input of a sequence key"},
    {NULL},
};

static PyGetSetDef call_getset[] = {
    {"remembered", (getter)call_get_remembered, NULL, "the tuple of the remembered key's elements, or None", NULL},
    {NULL},
};

static PyTypeObject CallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robot_dynamics.calls._fastcall.Call",
    .tp_doc = "A quantity for one state, called in C (robot_dynamics/_fastcall.c).",
    .tp_basicsize = sizeof(Call),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = call_new,
    .tp_dealloc = (destructor)call_dealloc,
    .tp_traverse = (traverseproc)call_traverse,
    .tp_clear = (inquiry)call_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Call, vectorcall),
    .tp_getset = call_getset,
    .tp_methods = call_methods,
};

/* ---- Contiguous: a checked kernel for the routes written in Python (kernels.AnyStrides) ---------------------
 * The kernels are compiled for C-contiguous arrays.  A Contiguous calls `kernel` (the compiled function) when its
 * last `n` arguments are C-contiguous ndarrays, and `slow` (kernels.AnyStrides: copies, then the kernel) otherwise
 * or while `kernel` is None (not compiled yet): the check costs ~10 ns here against 0.3 us in Python. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *kernel;           /* None until the kernel is resolved; then the compiled function */
    PyObject *slow;             /* called with the same arguments otherwise */
    Py_ssize_t n;               /* how many trailing arguments must be C-contiguous arrays */
} Contiguous;

static PyObject *contiguous_vectorcall(Contiguous *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int dense = self->kernel != Py_None && kwnames == NULL && nargs >= self->n;
    for (Py_ssize_t i = nargs - self->n; dense && i < nargs; i++)
        dense = PyArray_Check(args[i]) && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[i]);
    return PyObject_Vectorcall(dense ? self->kernel : self->slow, args, nargsf, kwnames);
}

static PyObject *contiguous_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *slow;
    Py_ssize_t n;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyErr_SetString(PyExc_TypeError, "Contiguous(slow, n) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "On", &slow, &n))
        return NULL;
    Contiguous *self = (Contiguous *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)contiguous_vectorcall;
    Py_INCREF(Py_None);
    self->kernel = Py_None;
    Py_INCREF(slow);
    self->slow = slow;
    self->n = n;
    return (PyObject *)self;
}

static int contiguous_traverse(Contiguous *self, visitproc visit, void *arg)
{
    Py_VISIT(self->kernel);
    Py_VISIT(self->slow);
    return 0;
}

static int contiguous_clear(Contiguous *self)
{
    Py_CLEAR(self->kernel);
    Py_CLEAR(self->slow);
    return 0;
}

static void contiguous_dealloc(Contiguous *self)
{
    PyObject_GC_UnTrack(self);
    contiguous_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *contiguous_get_kernel(Contiguous *self, void *closure)
{
    Py_INCREF(self->kernel);
    return self->kernel;
}

static int contiguous_set_kernel(Contiguous *self, PyObject *value, void *closure)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete a Contiguous's kernel");
        return -1;
    }
    Py_INCREF(value);
    Py_SETREF(self->kernel, value);
    return 0;
}

static PyGetSetDef contiguous_getset[] = {
    {"kernel", (getter)contiguous_get_kernel, (setter)contiguous_set_kernel,
     "None, or the compiled kernel called when the trailing arguments are C-contiguous", NULL},
    {NULL},
};

static PyTypeObject ContiguousType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robot_dynamics.calls._fastcall.Contiguous",
    .tp_doc = "Contiguous(slow, n): a kernel for C-contiguous arrays, else slow (robot_dynamics/_fastcall.c).",
    .tp_basicsize = sizeof(Contiguous),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = contiguous_new,
    .tp_dealloc = (destructor)contiguous_dealloc,
    .tp_traverse = (traverseproc)contiguous_traverse,
    .tp_clear = (inquiry)contiguous_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Contiguous, vectorcall),
    .tp_getset = contiguous_getset,
};

/* ---- Entry: a kernel's C entry point for the routes written in Python (kernels.AnyStrides) ------------------
 * Entry(address, ndims, n_inputs, n_outputs, overlap)(bodies, work, *arrays) -> status calls generated.fast_kernel's
 * C function, the quantity's one compiled entry, with the arguments a checked kernel takes (registry.CHECKED, the
 * route without the extension): every one an ndarray of the kernel's ndims[i] dimensions, C-contiguous, the last
 * n_inputs + n_outputs float64 -- a TypeError otherwise.  Like the checked kernel it returns `overlap`, nothing
 * computed, when an output's bytes may overlap an input's or another output's (the fixed arrays before the inputs
 * are the robot's own).  It checks and decides nothing else: the Quantity has validated the arguments. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_t kernel;
    int n;                      /* arguments: bodies, work, then the arrays whose pointers the kernel takes */
    int ndim[MAX_ARRAYS];
    int n_inputs, n_outputs;
    i64 overlap;
} Entry;

static PyObject *entry_vectorcall(Entry *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || nargs != self->n)
        return PyErr_Format(PyExc_TypeError, "Entry takes %d positional arrays, got %zd", self->n, nargs);
    PyArrayObject *given[MAX_ARRAYS];
    for (int i = 0; i < self->n; i++) {
        if (!PyArray_Check(args[i]) || PyArray_NDIM((PyArrayObject *)args[i]) != self->ndim[i]
                || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[i])
                || (i >= self->n - self->n_inputs - self->n_outputs
                    && PyArray_DESCR((PyArrayObject *)args[i])->type_num != NPY_DOUBLE))
            return PyErr_Format(PyExc_TypeError, "Entry: argument %d is not a C-contiguous array of the kernel's "
                                "type with %d dimensions", i, self->ndim[i]);
        given[i] = (PyArrayObject *)args[i];
    }
    int first = self->n - self->n_inputs - self->n_outputs;
    if (any_overlap(given + first, self->n_inputs, self->n_inputs + self->n_outputs))
        return PyLong_FromLongLong(self->overlap);
    void *pointers[MAX_ARRAYS];
    i64 dims[MAX_DIMS];
    int p = 0, d = 1;
    dims[0] = PyArray_DIM(given[0], 0);
    for (int i = 2; i < self->n; i++)
        add_array(given[i], pointers, &p, dims, &d);
    return PyLong_FromLongLong(self->kernel(PyArray_DATA(given[0]), PyArray_DATA(given[1]), pointers, dims));
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *address, *ndims;
    int n_inputs, n_outputs;
    long long overlap;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyErr_SetString(PyExc_TypeError, "Entry(address, ndims, n_inputs, n_outputs, overlap) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO!iiL", &address, &PyTuple_Type, &ndims, &n_inputs, &n_outputs, &overlap))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(ndims);
    i64 total = 1;
    void *kernel = PyLong_AsVoidPtr(address);
    if (kernel == NULL && PyErr_Occurred())
        return NULL;
    if (kernel == NULL || n < 2 || n > MAX_ARRAYS || n_inputs < 0 || n_outputs < 1 || n_inputs + n_outputs > n - 2) {
        PyErr_SetString(PyExc_ValueError, "Entry: a kernel's address, 2 to 24 ndims, inputs and outputs among them");
        return NULL;
    }
    Entry *self = (Entry *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        self->ndim[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(ndims, i));
        total += i >= 2 ? self->ndim[i] : 0;
        if (self->ndim[i] < 0 || self->ndim[i] > MAX_NDIM || (i < 2 && self->ndim[i] != 1)) {
            Py_DECREF(self);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Entry: ndims of 0 to 4 (1 for the body records and workspace)");
            return NULL;
        }
    }
    if (total > MAX_DIMS) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "Entry: too many dimensions");
        return NULL;
    }
    self->vectorcall = (vectorcallfunc)entry_vectorcall;
    self->kernel = (kernel_t)kernel;
    self->n = (int)n;
    self->n_inputs = n_inputs;
    self->n_outputs = n_outputs;
    self->overlap = overlap;
    return (PyObject *)self;
}

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robot_dynamics.calls._fastcall.Entry",
    .tp_doc = "Entry(address, ndims, n_inputs, n_outputs, overlap): a kernel's C entry point called with arrays "
              "(robot_dynamics/_fastcall.c).",
    .tp_basicsize = sizeof(Entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = entry_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
};

/* ---- Method: a Robot method that hands its arguments to the robot's entry of a registry row ------------------
 * Robot's methods are defs in its class body (robot.py), most of them `return self._calls[row](q, ..., out)`.
 * Called as a def, that line costs a Python frame, an attribute and a subscript: ~0.09 us, 10-15 % of a frame
 * Jacobian.  A Method stands in the class for such a def (robot.forwards): called on a robot it does the same in
 * C -- binds the arguments to the def's parameters (positional or by name, the def's defaults for the others),
 * takes self._calls[row] and calls it with the forwarded parameters (and constants) in order -- when every
 * parameter it does not forward holds its default (the very object) and the entry exists; anything else (an
 * unknown keyword, a missing argument, another value of a parameter the def reads itself, an entry not made yet)
 * calls the def itself, which does what it says.  Read from the class, a Method is the def (help, inspect, the
 * source); Py_TPFLAGS_METHOD_DESCRIPTOR lets `robot.method(...)` call it without making a bound method. */
#define MAX_PARAMS 16

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *function;         /* the def */
    PyObject *row;              /* the key of self._calls */
    PyObject *names;            /* tuple of str: the def's parameters after self */
    PyObject *defaults;         /* tuple: each parameter's default, or NULL-marking `required` for none */
    PyObject *required;         /* the object that marks a parameter without a default */
    PyObject *constants;        /* tuple: the constants forwarded */
    Py_ssize_t n_params;
    Py_ssize_t n_forward;
    Py_ssize_t forward[MAX_PARAMS];     /* >= 0: that parameter; < 0: constants[-1 - forward[k]] */
    char forwarded[MAX_PARAMS];         /* parameter i is forwarded */
    PyObject *last_robot;       /* NULL, or a weak reference to the robot called last ... */
    PyObject *last_calls;       /* ... and one to its _calls (read again for another robot, or once either died) */
} Method;

static PyObject *str_calls;

static PyObject *method_vectorcall(Method *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    Py_ssize_t n = self->n_params;
    PyObject *bound[MAX_PARAMS] = {NULL};
    if (nargs < 1 || nargs - 1 > n)
        goto as_def;
    for (Py_ssize_t i = 1; i < nargs; i++)
        bound[i - 1] = args[i];
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j);
        Py_ssize_t i = 0;
        while (i < n && PyTuple_GET_ITEM(self->names, i) != key)           /* names are interned: identity */
            i++;
        for (Py_ssize_t m = 0; i == n && m < n; m++)
            if (PyUnicode_Compare(PyTuple_GET_ITEM(self->names, m), key) == 0)
                i = m;
        if (PyErr_Occurred()) {
            PyErr_Clear();
            goto as_def;
        }
        if (i == n || bound[i] != NULL)                                    /* unknown or repeated: the def says */
            goto as_def;
        bound[i] = args[nargs + j];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(self->defaults, i);
        if (bound[i] == NULL) {
            if (d == self->required)
                goto as_def;
            bound[i] = d;
        }
        else if (!self->forwarded[i] && bound[i] != d)                     /* the def reads it itself */
            goto as_def;
    }
    PyObject *calls = NULL;
    if (self->last_robot != NULL && PyWeakref_GET_OBJECT(self->last_robot) == args[0]) {
        calls = PyWeakref_GET_OBJECT(self->last_calls);          /* a robot's _calls is set once, in __init__ */
        if (calls == Py_None)
            calls = NULL;
        else
            Py_INCREF(calls);
    }
    if (calls == NULL) {
        calls = PyObject_GetAttr(args[0], str_calls);
        if (calls == NULL) {
            PyErr_Clear();
            goto as_def;
        }
        PyObject *robot_ref = PyWeakref_NewRef(args[0], NULL), *calls_ref = PyWeakref_NewRef(calls, NULL);
        if (robot_ref == NULL || calls_ref == NULL) {               /* not weakly referenceable: no cache */
            PyErr_Clear();
            Py_XDECREF(robot_ref);
            Py_XDECREF(calls_ref);
        }
        else {
            Py_XSETREF(self->last_robot, robot_ref);
            Py_XSETREF(self->last_calls, calls_ref);
        }
    }
    PyObject *entry = PyDict_Check(calls) ? PyDict_GetItemWithError(calls, self->row) : NULL;
    if (entry == NULL) {                                                   /* made at the def's first call */
        PyErr_Clear();
        Py_DECREF(calls);
        goto as_def;
    }
    Py_INCREF(entry);
    Py_DECREF(calls);
    PyObject *forward[MAX_PARAMS];
    for (Py_ssize_t k = 0; k < self->n_forward; k++) {
        Py_ssize_t i = self->forward[k];
        forward[k] = i >= 0 ? bound[i] : PyTuple_GET_ITEM(self->constants, -1 - i);
    }
    PyObject *result = PyObject_Vectorcall(entry, forward, self->n_forward, NULL);
    Py_DECREF(entry);
    return result;
as_def:
    return PyObject_Vectorcall(self->function, args, nargsf, kwnames);
}

static PyObject *method_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    /* Method(function, row, names, defaults, required, forward, constants): forward a tuple of parameter indices
       (>= 0) and -1 - (index into constants) */
    PyObject *function, *row, *names, *defaults, *required, *forward, *constants;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyErr_SetString(PyExc_TypeError, "Method takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OUO!O!OO!O!", &function, &row, &PyTuple_Type, &names, &PyTuple_Type, &defaults,
                          &required, &PyTuple_Type, &forward, &PyTuple_Type, &constants))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(names), m = PyTuple_GET_SIZE(forward);
    if (n > MAX_PARAMS || m > MAX_PARAMS || PyTuple_GET_SIZE(defaults) != n || !PyCallable_Check(function)) {
        PyErr_SetString(PyExc_ValueError, "Method: a callable, at most 16 names with a default each, at most 16 "
                                          "forwarded");
        return NULL;
    }
    Method *self = (Method *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)method_vectorcall;
    self->n_params = n;
    self->n_forward = m;
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(forward, k));
        if ((i == -1 && PyErr_Occurred()) || i >= n || -1 - i >= PyTuple_GET_SIZE(constants)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Method: a forwarded index out of range");
            Py_DECREF(self);
            return NULL;
        }
        self->forward[k] = i;
        if (i >= 0)
            self->forwarded[i] = 1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "Method: parameter names are str");
            Py_DECREF(self);
            return NULL;
        }
    Py_INCREF(function); self->function = function;
    Py_INCREF(row); self->row = row;
    Py_INCREF(names); self->names = names;
    Py_INCREF(defaults); self->defaults = defaults;
    Py_INCREF(required); self->required = required;
    Py_INCREF(constants); self->constants = constants;
    return (PyObject *)self;
}

static PyObject *method_descr_get(Method *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {                    /* read from the class: the def itself */
        Py_INCREF(self->function);
        return self->function;
    }
    return PyMethod_New((PyObject *)self, obj);
}

static int method_traverse(Method *self, visitproc visit, void *arg)
{
    Py_VISIT(self->function);
    Py_VISIT(self->row);
    Py_VISIT(self->names);
    Py_VISIT(self->defaults);
    Py_VISIT(self->required);
    Py_VISIT(self->constants);
    Py_VISIT(self->last_robot);
    Py_VISIT(self->last_calls);
    return 0;
}

static int method_clear(Method *self)
{
    Py_CLEAR(self->function);
    Py_CLEAR(self->row);
    Py_CLEAR(self->names);
    Py_CLEAR(self->defaults);
    Py_CLEAR(self->required);
    Py_CLEAR(self->constants);
    Py_CLEAR(self->last_robot);
    Py_CLEAR(self->last_calls);
    return 0;
}

static void method_dealloc(Method *self)
{
    PyObject_GC_UnTrack(self);
    method_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *method_getattro(Method *self, PyObject *name)
{
    /* the def's attributes (__doc__, __name__, __qualname__, __module__, __wrapped__ -> the def) for introspection */
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(self->function);
        return self->function;
    }
    if (PyUnicode_Check(name) && (PyUnicode_CompareWithASCIIString(name, "__doc__") == 0
                                  || PyUnicode_CompareWithASCIIString(name, "__name__") == 0
                                  || PyUnicode_CompareWithASCIIString(name, "__qualname__") == 0
                                  || PyUnicode_CompareWithASCIIString(name, "__module__") == 0))
        return PyObject_GetAttr(self->function, name);
    return PyObject_GenericGetAttr((PyObject *)self, name);
}

static int method_setattro(Method *self, PyObject *name, PyObject *value)
{
    /* __doc__ is the def's (robot.py adds to some docstrings after their def) */
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__doc__") == 0)
        return PyObject_SetAttr(self->function, name, value);
    return PyObject_GenericSetAttr((PyObject *)self, name, value);
}

static PyObject *method_get_row(Method *self, void *closure)
{
    Py_INCREF(self->row);
    return self->row;
}

static PyGetSetDef method_getset[] = {
    {"row", (getter)method_get_row, NULL, "the key of Robot._calls the def hands over to", NULL},
    {NULL},
};

static PyTypeObject MethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robot_dynamics.calls._fastcall.Method",
    .tp_doc = "A Robot method's def, called in C when it only hands over to self._calls[row] (robot.forwards).",
    .tp_basicsize = sizeof(Method),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = method_new,
    .tp_dealloc = (destructor)method_dealloc,
    .tp_traverse = (traverseproc)method_traverse,
    .tp_clear = (inquiry)method_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Method, vectorcall),
    .tp_descr_get = (descrgetfunc)method_descr_get,
    .tp_getattro = (getattrofunc)method_getattro,
    .tp_setattro = (setattrofunc)method_setattro,
    .tp_getset = method_getset,
};

/* ---- overlapping(inputs, outputs): a batch's out= against its inputs, before any state is computed ---------- */

static PyObject *overlapping(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "overlapping(inputs, outputs) takes two tuples of arrays");
        return NULL;
    }
    Py_ssize_t n_in = PyTuple_GET_SIZE(args[0]), n = n_in + PyTuple_GET_SIZE(args[1]);
    PyArrayObject *arrays[MAX_ARRAYS];
    if (n > MAX_ARRAYS) {
        PyErr_SetString(PyExc_ValueError, "overlapping: too many arrays");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = i < n_in ? PyTuple_GET_ITEM(args[0], i) : PyTuple_GET_ITEM(args[1], i - n_in);
        if (!PyArray_Check(x)) {
            PyErr_SetString(PyExc_TypeError, "overlapping(inputs, outputs) takes two tuples of arrays");
            return NULL;
        }
        arrays[i] = (PyArrayObject *)x;
    }
    return PyBool_FromLong(any_overlap(arrays, (int)n_in, (int)n));
}

/* ---- layout(nbodies, per_thread, constants, per_state): batch.batch_layout in C ---------------------------- */

static PyObject *layout(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    static const char usage[] = "layout(nbodies, per_thread, constants, per_state) takes an int and three tuples "
                                "of arrays (per_thread and per_state of at least one dimension)";
    if (nargs != 4 || !PyLong_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])
            || !PyTuple_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    i64 nbodies = PyLong_AsLongLong(args[0]);
    if (nbodies == -1 && PyErr_Occurred())
        return NULL;
    PyArrayObject *arrays[MAX_ARRAYS];
    int group[MAX_ARRAYS];                      /* 0: one copy per thread, 1: constant, 2: one row per state */
    Py_ssize_t n = 0, n_dims = 1;
    for (int g = 0; g < 3; g++) {
        PyObject *tuple = args[1 + g];
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
            PyObject *x = PyTuple_GET_ITEM(tuple, i);
            if (n == MAX_ARRAYS) {
                PyErr_SetString(PyExc_ValueError, "layout: too many arrays");
                return NULL;
            }
            if (!PyArray_Check(x) || (g != 1 && PyArray_NDIM((PyArrayObject *)x) == 0)) {
                PyErr_SetString(PyExc_TypeError, usage);
                return NULL;
            }
            arrays[n] = (PyArrayObject *)x;
            group[n] = g;
            n_dims += PyArray_NDIM(arrays[n]) - (g != 1);
            n++;
        }
    }
    npy_intp size = 1 + 3 * n + n_dims;
    PyArrayObject *result = (PyArrayObject *)PyArray_SimpleNew(1, &size, NPY_INT64);
    if (result == NULL)
        return NULL;
    i64 *o = PyArray_DATA(result), *dims = o + 1 + 3 * n;
    o[0] = n;
    *dims++ = nbodies;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyArrayObject *a = arrays[k];
        i64 step = group[k] == 1 ? 0 : PyArray_STRIDE(a, 0);
        o[1 + k] = (i64)(Py_intptr_t)PyArray_DATA(a);
        o[1 + n + k] = group[k] == 2 ? step : 0;
        o[1 + 2 * n + k] = group[k] == 0 ? step : 0;
        for (int d = group[k] != 1; d < PyArray_NDIM(a); d++)
            *dims++ = PyArray_DIM(a, d);
    }
    return (PyObject *)result;
}

static PyMethodDef module_methods[] = {
    {"overlapping", (PyCFunction)(void (*)(void))overlapping, METH_FASTCALL,
     "overlapping(inputs, outputs): True when an output's byte extent overlaps an input's or another output's"},
    {"layout", (PyCFunction)(void (*)(void))layout, METH_FASTCALL,
     "layout(nbodies, per_thread, constants, per_state): batch.batch_layout's int64 array, in C"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastcall",
    "A Robot method's call for one state, from Python straight into its compiled kernel.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__fastcall(void)
{
    import_array();
    float64 = PyArray_DescrFromType(NPY_DOUBLE);
    str_out = PyUnicode_InternFromString("out");
    str_calls = PyUnicode_InternFromString("_calls");
    if (float64 == NULL || str_out == NULL || str_calls == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddType(m, &CallType) < 0 || PyModule_AddType(m, &ContiguousType) < 0
            || PyModule_AddType(m, &EntryType) < 0 || PyModule_AddType(m, &MethodType) < 0) {                                         /* readies them */
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
