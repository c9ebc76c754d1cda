/* Python exception classes a Go error maps to (errkind.go Kind, errors.c). */
#ifndef GODLPACK_ERRKIND_H_
#define GODLPACK_ERRKIND_H_

enum {
  GDL_ERR_NONE = 0,
  GDL_ERR_VALUE,    /* ValueError */
  GDL_ERR_BUFFER,   /* BufferError: a tensor refused */
  GDL_ERR_MEMORY,   /* MemoryError */
  GDL_ERR_OVERFLOW, /* OverflowError: a value out of the dtype's range */
  GDL_ERR_TYPE,     /* TypeError */
  GDL_ERR_PANIC,    /* RuntimeError: a Go panic, recovered */
  GDL_ERR_RUNTIME,  /* RuntimeError */
  GDL_ERR_PYTHON,   /* a Python exception is already set */
};

#endif
