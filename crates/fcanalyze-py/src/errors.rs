//! Core errors as Python exceptions, converted in one place ([`to_py`]): a failing file system becomes
//! `OSError`, bad input `ValueError`, a broken invariant [`InternalError`].

use fccore::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

create_exception!(
    _core,
    InternalError,
    PyRuntimeError,
    "A broken invariant in the core: a bug, never bad input."
);

/// The Python exception of a core error.
pub fn to_py(e: Error) -> PyErr {
    if let Error::Io(m) | Error::DiskFull(m) = &e {
        PyOSError::new_err(m.clone())
    } else if e.is_user_error() {
        PyValueError::new_err(e.to_string())
    } else {
        InternalError::new_err(e.to_string())
    }
}
