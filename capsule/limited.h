/* What the C of godlpack's runtime and of pyext needs from CPython beyond
 * the limited API (stable ABI, abi3: docs/install.md), for a build with
 * Py_LIMITED_API defined: there, the object macros that read a struct
 * (PyTuple_GET_ITEM, ...) become their function forms, a type's name is read
 * through its attributes, and the few functions outside the stable ABI that
 * every CPython since 3.12 exports are found at run time (dlsym; Windows:
 * GetProcAddress on python3XY.dll), so the
 * extension imports no symbol abi3audit would refuse. Without Py_LIMITED_API
 * (the default, version-specific build) only the object-struct accessors
 * below are defined, as the plain casts and PyObject_HEAD they stand for.
 * Included by capsule.h, after <Python.h>; every layer includes that. */
#ifndef GODLPACK_LIMITED_H_
#define GODLPACK_LIMITED_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef Py_LIMITED_API
#if Py_LIMITED_API + 0 < 0x030c0000
#error "godlpack's limited-API build needs Py_LIMITED_API >= 0x030c0000 (3.12)"
#endif

/* The function forms: checked, a little slower; the same results on the
 * objects these are used on (exact tuples, lists, bytes, floats, dicts). */
#define PyTuple_GET_ITEM(t, i) PyTuple_GetItem((t), (i))
#define PyTuple_GET_SIZE(t) PyTuple_Size(t)
#define PyTuple_SET_ITEM(t, i, v) ((void)PyTuple_SetItem((t), (i), (v)))
#define PyList_GET_ITEM(l, i) PyList_GetItem((l), (i))
#define PyList_GET_SIZE(l) PyList_Size(l)
#define PyList_SET_ITEM(l, i, v) ((void)PyList_SetItem((l), (i), (v)))
#define PyBytes_AS_STRING(b) PyBytes_AsString(b)
#define PyBytes_GET_SIZE(b) PyBytes_Size(b)
#define PyFloat_AS_DOUBLE(f) PyFloat_AsDouble(f)
#define PyDict_GET_SIZE(d) PyDict_Size(d)
#define PyUnicode_GET_LENGTH(s) PyUnicode_GetLength(s)
#if Py_LIMITED_API + 0 < 0x030d0000 || Py_LIMITED_API + 0 >= 0x030f0000 /* not in 3.15's limited API */
#define PyUnicode_AsUTF8(s) PyUnicode_AsUTF8AndSize((s), NULL)
#endif
#define PyObject_CallOneArg(f, a) PyObject_CallFunctionObjArgs((f), (a), NULL)
#define PyObject_CallMethodNoArgs(o, name) PyObject_CallMethodObjArgs((o), (name), NULL)
#define PyMem_RawCalloc calloc
#define PyMem_RawFree free
#ifndef Py_SETREF
#define Py_SETREF(dst, src)      \
  do {                           \
    PyObject* _gdl_old = (dst); \
    (dst) = (src);               \
    Py_DECREF(_gdl_old);         \
  } while (0)
#define Py_XSETREF(dst, src)     \
  do {                           \
    PyObject* _gdl_old = (dst); \
    (dst) = (src);               \
    Py_XDECREF(_gdl_old);        \
  } while (0)
#endif

/* Python code run in ns (its globals and locals) as PyRun_String does,
 * compiled first: PyRun_String is outside the stable ABI. */
PyObject* gdl_run_string(const char* src, int start, PyObject* globals, PyObject* locals);
#define PyRun_String(src, start, g, l) gdl_run_string((src), (start), (g), (l))

/* A type's slot: PyType_GetSlot (any type, static ones too, since 3.10). */
#define GDL_SLOT(tp, field, type) ((type)PyType_GetSlot((tp), Py_##field))

/* Whether the own __dict__ of tp (not its bases') has name: 1 with a new
 * reference in *v, 0 (*v NULL), -1 with an exception (tp_dict is not in
 * the limited API: through the type's mapping proxy). */
int gdl_type_own_attr(PyTypeObject* tp, PyObject* name, PyObject** v);

/* tp_name: "module.name" ("name" for builtins and a class statement's
 * classes, as CPython's own tp_name), kept in a dict, so the
 * pointer lives as long as the process (type names are few). On
 * a failure "?" (no exception set): it only names types in messages. */
const char* gdl_tp_name(PyTypeObject* tp);
#define GDL_TP_NAME(tp) gdl_tp_name(tp)

/* The functions every CPython from 3.12 on exports but the stable ABI does
 * not list, looked up once in the running interpreter. */
int gdl_gilstate_check(void);    /* PyGILState_Check */
int gdl_is_finalizing(void);     /* Py_IsFinalizing (3.13), _Py_IsFinalizing (3.12) */
int gdl_is_main_interpreter(void); /* PyInterpreterState_Get() == PyInterpreterState_Main() */
PyObject* gdl_type_dict(PyTypeObject* tp); /* PyType_GetDict: a new reference, NULL with an exception */
PyObject* gdl_module_attr(const char* module, const char* name); /* module.name: a new reference, NULL with an exception */
#else
#define GDL_TP_NAME(tp) ((tp)->tp_name)
#define GDL_SLOT(tp, field, type) ((type)(tp)->field)
#endif

/* Object structs, written once for every build. A struct of ours starts
 * with GDL_HEAD; a PyObject* becomes a pointer to it by GDL_AS and back by
 * GDL_OBJ; objects are made by GDL_NEW/GDL_GC_NEW; a type's spec takes
 * GDL_BASICSIZE and its members GDL_MEMBER_FLAGS (offsets by offsetof).
 * Version-specific and abi3 builds: PyObject_HEAD and plain casts, as
 * before. abi3t (Py_TARGET_ABI3T, PEP 803): PyObject is opaque and its size
 * differs between GIL and free-threaded CPython, so a struct holds our
 * fields alone, in the type's own data (a negative basicsize), at one offset
 * from the object for every type whose base is object (all of ours), found
 * once at run time (PyObject_GetTypeData) by gdl_opaque_init, which the
 * first PyType_FromSpec runs (limited.c's wrapper, which also makes a
 * relative __weaklistoffset__ absolute); members are relative to the data
 * (Py_RELATIVE_OFFSET). Foreign structs (NumPy's) start after PyObject
 * itself, whose size is read at run time: GDL_FOREIGN. */
#ifdef _Py_OPAQUE_PYOBJECT
#define GDL_OPAQUE 1
extern Py_ssize_t gdl_data_offset; /* from the object to a type's own data */
extern Py_ssize_t gdl_head_size;   /* sizeof(PyObject) of the running CPython */
int gdl_opaque_init(void);         /* 0, or -1 with an exception */
static inline void* gdl_as(PyObject* o) { return o ? (void*)((char*)o + gdl_data_offset) : NULL; }
static inline PyObject* gdl_obj_of(void* p) { return p ? (PyObject*)(void*)((char*)p - gdl_data_offset) : NULL; }
#define GDL_HEAD
#define GDL_AS(T, o) ((T*)gdl_as(o))
#define GDL_OBJ(p) gdl_obj_of(p)
#define GDL_FOREIGN(T, o) ((T*)(void*)((char*)(o) + gdl_head_size))
#define GDL_BASICSIZE(T) (-(int)sizeof(T))
#define GDL_MEMBER_FLAGS (Py_READONLY | Py_RELATIVE_OFFSET)
PyObject* gdl_type_from_spec(PyObject* module, PyType_Spec* spec, PyObject* bases);
#define PyType_FromSpec(spec) gdl_type_from_spec(NULL, (spec), NULL)
#define PyType_FromModuleAndSpec(m, spec, bases) gdl_type_from_spec((m), (spec), (bases))
#else
#define GDL_HEAD PyObject_HEAD
#define GDL_AS(T, o) ((T*)(o))
#define GDL_OBJ(p) ((PyObject*)(p))
#define GDL_FOREIGN(T, o) ((T*)(o))
#define GDL_BASICSIZE(T) ((int)sizeof(T))
#if PY_VERSION_HEX >= 0x030C0000
#define GDL_MEMBER_FLAGS Py_READONLY
#else
#define GDL_MEMBER_FLAGS READONLY /* structmember.h's */
#endif
#endif
#if defined(GDL_OPAQUE) && defined(GDL_CHECK_CASTS)
/* A check only (tests/tooling/test_abi3t.py): one of our structs passed as a
 * PyObject* (incompatible pointers) without GDL_OBJ fails to compile. The
 * other direction, a PyObject* cast to one of our structs without GDL_AS, is
 * not caught by the -Wall -Werror that test uses (the over-alignment below
 * would take -Wcast-align=strict); review finds those. */
#undef GDL_HEAD
#define GDL_HEAD _Alignas(64) char gdl_check_align_;
static inline PyObject* gdl_check_obj(PyObject* o) { return o; }
#undef _PyObject_CAST
#define _PyObject_CAST(op) gdl_check_obj(_Generic((op), PyTypeObject*: (PyObject*)(op), default: (op)))
#endif
/* Whether the running CPython is a free-threaded build: known when
 * compiling, except under abi3t, whose one file serves both (sys.abiflags,
 * read by gdl_opaque_init). */
#ifdef GDL_OPAQUE
extern int gdl_free_threaded;
#define GDL_FREE_THREADED gdl_free_threaded
#elif defined(Py_GIL_DISABLED)
#define GDL_FREE_THREADED 1
#else
#define GDL_FREE_THREADED 0
#endif
#define GDL_NEW(T, tp) GDL_AS(T, _PyObject_New(tp))
#define GDL_GC_NEW(T, tp) GDL_AS(T, _PyObject_GC_New(tp))

#endif
