/*
 * A CPython extension module with a data race on its own C state: bump()
 * releases the GIL (Py_BEGIN_ALLOW_THREADS) and increments a static
 * counter with no lock, so two threads calling it can lose an update.
 * Built by the python_versions tests against each interpreter's headers
 * (tests/integration/test_python_versions.c); counter_race.py runs it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static long counter;

static void bump_unlocked(void)
{
	long seen = counter;

	counter = seen + 1;
}

static PyObject *bump(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS
	bump_unlocked();
	Py_END_ALLOW_THREADS
	Py_RETURN_NONE;
}

static PyObject *value(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLong(counter);
}

static PyMethodDef methods[] = {
	{ "bump", bump, METH_NOARGS, "counter += 1, without the GIL" },
	{ "value", value, METH_NOARGS, "the counter" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "counterext", NULL, -1, methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_counterext(void)
{
	return PyModule_Create(&module);
}
