"""ctypes bindings of libhdpsgd's handle API (include/hdpsgd/handle.h).

Only opaque pointers cross the boundary: no C struct is mirrored here, so a change of
hdp_model or of a result struct in the C library does not break this module. Every
function that returns an hdp_status is wrapped by :func:`call`, which turns a failure into
an exception carrying the library's message.
"""

import ctypes
import os
import signal
import threading

from . import _config

# hdp_status (include/hdpsgd/error.h)
OK, EINPUT, EIO, ENUMERIC, ENOMEM, ECANCELLED = 0, 1, 2, 3, 4, 5


class Error(Exception):
    """A failure reported by libhdpsgd; ``status`` is the hdp_status code."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InputError(Error, ValueError):
    """Bad input: an unknown key, a value out of range, a missing file (HDP_EINPUT)."""

    status = EINPUT


class OutputError(Error, OSError):
    """An output file could not be written (HDP_EIO)."""

    status = EIO


class NumericalError(Error, ArithmeticError):
    """A solver failure or every Monte Carlo run diverged (HDP_ENUMERIC)."""

    status = ENUMERIC


class OutOfMemoryError(Error, MemoryError):
    """The library ran out of memory (HDP_ENOMEM)."""

    status = ENOMEM


class Cancelled(Error):
    """A long call stopped early because a progress callback asked it to (HDP_ECANCELLED)."""

    status = ECANCELLED


def cstr(text, what, path=False):
    """text (str, or bytes) as the bytes of a C string: a NUL byte would end the string early
    in C (the rest silently dropped), so it is refused; a path is encoded as the file system
    does (os.fsencode), other text as UTF-8."""
    data = text if isinstance(text, bytes) else (os.fsencode(text) if path else text.encode())
    at = data.find(b"\0")
    if at >= 0:
        raise InputError(f"{what} {text!r}: holds a NUL character (byte 0) at position {at}, "
                         "which C would read as the end of the text")
    return data


# The C int limits: a Python int beyond them would be cut by ctypes to its low 32 bits.
INT_MAX = 2**31 - 1


_ERRORS = {EINPUT: InputError, EIO: OutputError, ENUMERIC: NumericalError,
           ENOMEM: OutOfMemoryError, ECANCELLED: Cancelled}


def _find_library():
    """HDPSGD_LIBRARY, else the path fixed at configure time, else the loader's search. A
    library named by HDPSGD_LIBRARY is the one loaded or the import fails: another one found
    instead would silently give other numbers."""
    given = os.environ.get("HDPSGD_LIBRARY")
    if given:
        try:
            found = ctypes.CDLL(given)
            found.hdp_model_new  # noqa: B018 - a library, but is it libhdpsgd?
            return found, given
        except (OSError, AttributeError) as e:
            raise ImportError(f"hdpsgd: HDPSGD_LIBRARY={given!r} cannot be loaded ({e}): "
                              "set it to a libhdpsgd.so, or unset it") from None
    candidates = []
    if _config.LIBRARY:
        candidates.append(_config.LIBRARY)
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "libhdpsgd.so"))
    candidates.append("libhdpsgd.so.0")
    tried = []
    for path in candidates:
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (no such file)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("hdpsgd: libhdpsgd.so not found; tried: " + "; ".join(tried) +
                      ". Build it (cmake --build build) or set HDPSGD_LIBRARY")


lib, LIBRARY_PATH = _find_library()

_P = ctypes.c_void_p
_S = ctypes.c_int  # hdp_status
_str = ctypes.c_char_p
PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_long, ctypes.c_long,
                            ctypes.c_double, ctypes.c_void_p)


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


def _apply_environment():
    """The library reads no environment variable: the same policy as the program hdpsgd
    (src/cli/main.c), applied once at import: HDPSGD_SIMD (an unknown or unavailable kernel
    is ignored: the numbers are the same), OMP_STACKSIZE / GOMP_STACKSIZE, and no pinning of
    threads when OMP_PROC_BIND, OMP_PLACES or MPI is set."""
    env = os.environ
    simd = env.get("HDPSGD_SIMD")
    if simd is not None:
        kernel = ctypes.c_int()
        if _proto("hdp_simd_parse", ctypes.c_int, _str, ctypes.c_void_p)(
                simd.encode(errors="replace"), ctypes.byref(kernel)):
            _proto("hdp_normals_use", ctypes.c_int, ctypes.c_int)(kernel.value)
    stack = env.get("OMP_STACKSIZE", env.get("GOMP_STACKSIZE"))
    size = _proto("hdp_stack_size_parse", ctypes.c_size_t, _str)(
        None if stack is None else stack.encode(errors="replace"))
    _proto("hdp_set_thread_stack_size", None, ctypes.c_size_t)(size)
    placed = any(k in env for k in ("OMP_PROC_BIND", "OMP_PLACES", "OMPI_COMM_WORLD_SIZE",
                                    "PMIX_RANK", "PMI_SIZE"))
    _proto("hdp_set_thread_pinning", None, ctypes.c_int)(0 if placed else 1)


_apply_environment()

hdp_error_new = _proto("hdp_error_new", _P)
hdp_error_delete = _proto("hdp_error_delete", None, _P)
hdp_error_get_status = _proto("hdp_error_get_status", _S, _P)
hdp_error_message = _proto("hdp_error_message", _str, _P)

hdp_model_new = _proto("hdp_model_new", _P)
hdp_model_delete = _proto("hdp_model_delete", None, _P)
hdp_model_load_file = _proto("hdp_model_load_file", _S, _P, _str, _P)
hdp_model_set = _proto("hdp_model_set", _S, _P, _str, _P)
hdp_model_finalize = _proto("hdp_model_finalize", _S, _P, _P)
_D = ctypes.POINTER(ctypes.c_double)
hdp_model_set_data_arrays = _proto("hdp_model_set_data_arrays", _S, _P, _D, ctypes.c_long,
                                   ctypes.c_long, _D, _D, ctypes.c_long, _D, _P)
hdp_model_with = _proto("hdp_model_with", _S, _P, _str, _str, _P, _P)
_TEXT = ctypes.POINTER(ctypes.c_char_p)
hdp_model_get_text = _proto("hdp_model_get_text", _S, _P, _str, ctypes.POINTER(_P), _P)
hdp_model_ini_text = _proto("hdp_model_ini_text", _S, _P, ctypes.POINTER(_P), _P)
hdp_model_meta_text = _proto("hdp_model_meta_text", _S, _P, ctypes.POINTER(_P), _P)
hdp_model_config_text = _proto("hdp_model_config_text", _S, _P, ctypes.c_int,
                               ctypes.POINTER(_P), _P)
hdp_text_free = _proto("hdp_text_free", None, _P)
hdp_model_schema_entry = _proto("hdp_model_schema_entry", ctypes.c_int, ctypes.c_int,
                                ctypes.POINTER(_str), ctypes.POINTER(_str),
                                ctypes.POINTER(_str), ctypes.POINTER(_str))

hdp_record_delete = _proto("hdp_record_delete", None, _P)
hdp_record_columns = _proto("hdp_record_columns", ctypes.c_int, _P)
hdp_record_column = _proto("hdp_record_column", _str, _P, ctypes.c_int,
                           ctypes.POINTER(ctypes.c_long),
                           ctypes.POINTER(ctypes.POINTER(ctypes.c_double)))
hdp_record_numbers = _proto("hdp_record_numbers", ctypes.c_int, _P)
hdp_record_number = _proto("hdp_record_number", _str, _P, ctypes.c_int,
                           ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int))
hdp_record_texts = _proto("hdp_record_texts", ctypes.c_int, _P)
hdp_record_text = _proto("hdp_record_text", _str, _P, ctypes.c_int, ctypes.POINTER(_str))

_CANCEL = ctypes.POINTER(ctypes.c_int)
hdp_handle_ode = _proto("hdp_handle_ode", _S, _P, ctypes.POINTER(_P), _P)
hdp_handle_ode_run = _proto("hdp_handle_ode_run", _S, _P, _CANCEL, PROGRESS, _P,
                            ctypes.POINTER(_P), _P)
hdp_handle_mc = _proto("hdp_handle_mc", _S, _P, _str, ctypes.c_int, ctypes.c_int, _CANCEL,
                       PROGRESS, _P, ctypes.POINTER(_P), _P)
hdp_handle_validate = _proto("hdp_handle_validate", _S, _P, ctypes.c_int, ctypes.c_int, _CANCEL,
                             PROGRESS, _P, ctypes.POINTER(_P), _P)
hdp_handle_design = _proto("hdp_handle_design", _S, _P, _str, ctypes.c_int, ctypes.c_int,
                           _CANCEL, PROGRESS, _P, ctypes.POINTER(_P), _P)
hdp_handle_design_refine = _proto("hdp_handle_design_refine", _S, _P, _str, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_double, _CANCEL, PROGRESS,
                                  _P, ctypes.POINTER(_P), _P)
hdp_handle_design_batch = _proto("hdp_handle_design_batch", _S, _P, _str, ctypes.c_int,
                                 ctypes.c_int, _CANCEL, PROGRESS, _P, ctypes.POINTER(_P), _P)
hdp_handle_design_method = _proto("hdp_handle_design_method", _S, _P, _str, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_double, _str,
                                  _CANCEL, PROGRESS, _P, ctypes.POINTER(_P), _P)
hdp_handle_rates = _proto("hdp_handle_rates", _S, _P, ctypes.c_double, ctypes.c_double,
                          ctypes.c_long, _str, ctypes.c_int, _CANCEL, PROGRESS, _P,
                          ctypes.POINTER(_P), _P)
hdp_handle_sweep_point = _proto("hdp_handle_sweep_point", _S, _P, _str, _str, ctypes.c_int,
                                ctypes.c_int, ctypes.c_double, ctypes.c_int, ctypes.c_double,
                                ctypes.c_double, ctypes.c_long, _str, ctypes.c_int, _CANCEL,
                                PROGRESS, _P, ctypes.POINTER(_P), _P)
hdp_handle_accountant = _proto("hdp_handle_accountant", _S, _P, ctypes.POINTER(_P), _P)
hdp_handle_dataset = _proto("hdp_handle_dataset", _S, _str, _str, ctypes.POINTER(ctypes.c_double),
                            ctypes.c_long, _str, _str, ctypes.c_int, _str, ctypes.c_double,
                            ctypes.POINTER(_P), _P)
hdp_handle_epsilon = _proto("hdp_handle_epsilon", _S, ctypes.c_double, ctypes.c_double,
                            ctypes.POINTER(ctypes.c_double), _P)
hdp_handle_rho_for = _proto("hdp_handle_rho_for", _S, ctypes.c_double, ctypes.c_double,
                            ctypes.POINTER(ctypes.c_double), _P)
hdp_handle_poisson_accountant = _proto("hdp_handle_poisson_accountant", _S, ctypes.c_double,
                                       ctypes.c_double, ctypes.c_double, ctypes.c_longlong,
                                       ctypes.c_double, _str, ctypes.POINTER(_P), _P)


class ErrorBox:
    """An hdp_error owned by Python."""

    def __init__(self):
        self.ptr = hdp_error_new()
        if not self.ptr:
            raise MemoryError("hdpsgd: out of memory")

    def __del__(self):
        if getattr(self, "ptr", None):
            hdp_error_delete(self.ptr)
            self.ptr = None

    def raise_for(self, status):
        if status == OK:
            return
        message = (hdp_error_message(self.ptr) or b"").decode("utf-8", "replace")
        cls = _ERRORS.get(status, Error)
        raise cls(message or f"hdpsgd: status {status}", status)


def call(fn, *args):
    """Call a function whose last argument is an hdp_error *; raise on failure."""
    box = ErrorBox()
    box.raise_for(fn(*args, box.ptr))


def take_text(ptr):
    """A char * returned by the library, as str, released."""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace") if ptr.value else ""
    finally:
        if ptr.value:
            hdp_text_free(ptr.value)


def record_dict(rec):
    """(columns, numbers, texts) of an hdp_record, copied; the record is released."""
    import numpy as np

    try:
        cols, nums, texts = {}, {}, {}
        length = ctypes.c_long()
        data = ctypes.POINTER(ctypes.c_double)()
        for i in range(hdp_record_columns(rec)):
            name = hdp_record_column(rec, i, ctypes.byref(length), ctypes.byref(data)).decode()
            n = length.value
            cols[name] = (np.ctypeslib.as_array(data, shape=(n,)).copy() if n > 0
                          else np.zeros(0))
        value = ctypes.c_double()
        kind = ctypes.c_int()
        for i in range(hdp_record_numbers(rec)):
            name = hdp_record_number(rec, i, ctypes.byref(value), ctypes.byref(kind)).decode()
            v = value.value
            nums[name] = int(v) if kind.value == 1 else bool(v) if kind.value == 2 else v
        text = ctypes.c_char_p()
        for i in range(hdp_record_texts(rec)):
            name = hdp_record_text(rec, i, ctypes.byref(text)).decode()
            texts[name] = (text.value or b"").decode("utf-8", "replace")
        return cols, nums, texts
    finally:
        hdp_record_delete(rec)


def _hold_sigint():
    """Block SIGINT in the calling thread; the previous mask (None where not possible)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    try:
        return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (OSError, ValueError):
        return None


def run_long(fn, args, progress=None):
    """Run fn(*args, cancel, progress_fn, user, &record, err) in a worker thread.

    The library releases the GIL (ctypes.CDLL) and checks ``cancel`` within the Monte Carlo
    runs (about every 4 million coordinate updates) and at every step of an ODE solve: Ctrl-C
    in the calling thread sets it, waits for the call to stop, and raises KeyboardInterrupt.
    ``progress(what, done, total, value)`` is called from the library's threads; a true
    return value (or an exception, re-raised here) stops the call.
    Returns the record (a c_void_p)."""
    cancel = ctypes.c_int(0)
    state = {"exc": None}

    def relay(what, done, total, value, user):
        try:
            stop = progress((what or b"").decode(), done, total, value)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            if state["exc"] is None:
                state["exc"] = e
            return 1
        return 1 if stop else 0

    cb = PROGRESS(relay) if progress is not None else PROGRESS()
    rec = ctypes.c_void_p()
    box = ErrorBox()
    result = {}
    finished = threading.Event()

    def work():
        try:
            result["status"] = fn(*args, ctypes.byref(cancel), cb, None, ctypes.byref(rec),
                                  box.ptr)
        except BaseException as e:  # noqa: BLE001
            result["exc"] = e
        finally:
            finished.set()

    if threading.current_thread() is not threading.main_thread():
        work()  # signals reach the main thread only: nothing to watch for here
    else:
        worker = threading.Thread(target=work, name="hdpsgd", daemon=True)
        # SIGINT held back while the worker starts (it inherits the mask, so it never takes
        # the signal itself), let through inside the try below: a Ctrl-C that comes before
        # the wait cannot leave the call running behind a KeyboardInterrupt
        held = _hold_sigint()
        try:
            worker.start()
        except BaseException:
            if held is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            raise
        interrupted = None
        # wait on an Event, not Thread.join: a join interrupted by Ctrl-C can mark a running
        # thread as stopped (CPython before 3.13, bpo-45274's fix)
        while True:
            try:
                if held is not None:  # always put back, here inside the try
                    mask, held = held, None
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                if finished.wait(0.1):
                    break
            except BaseException as e:  # noqa: BLE001 - Ctrl-C, or another signal handler's
                # exception (a SIGALRM timeout): the call must not run on behind it, on a
                # model the caller then frees
                cancel.value = 1  # the C side stops at its next check (within a run, a step)
                if interrupted is None:
                    interrupted = e
        worker.join()
        if interrupted is not None:
            if rec.value:
                hdp_record_delete(rec.value)
            raise interrupted
    if "exc" in result:
        raise result["exc"]
    if state["exc"] is not None:
        if rec.value:
            hdp_record_delete(rec.value)
        raise state["exc"]
    box.raise_for(result["status"])
    return rec
