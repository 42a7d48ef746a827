"""A watcher process beside each worker of an MPI job, for the two ways a
worker can leave the others waiting where no timeout of theirs reaches.

1. A worker that ends before it starts MPI (an error while loading its
   data) leaves the others inside ``MPI_Init``, which waits for every worker
   with no timeout, holding the interpreter's lock (so no thread of the
   waiting process can help). The watcher gives the start the group's
   timeout: past it, it says which worker waited and ends that worker's
   process, which ends the job with a non-zero status.
2. MPICH's launcher (hydra's ``mpiexec``) ends a job as soon as one worker's
   connection to it closes without MPI finalized: it kills the others and
   returns the status of the one that left. A worker gone with
   ``os._exit(0)`` mid-training thus ended the job with status 0 and no
   word. Under hydra (``PMI_FD``: the connection is an inherited
   descriptor) the watcher holds a copy of it. A worker that ends through
   Python's exit (``sys.exit``, an uncaught error, the end of its script) or
   ``MPI_Abort`` says so first, and the watcher just ends; one whose process
   vanishes without a word makes the watcher print which worker vanished and
   keep the connection open, so that the others stop with
   ``WorkerTimeoutError`` in their next exchange, within their timeout, and
   end the job with ``MPI_Abort``: an error, and a non-zero status. The
   watcher lets go when the launcher closes its end (the job is over) or
   after the timeout and a margin.

A script that ends every worker with ``os._exit`` after its work gets that
notice from each watcher, and its job ends as before (status 0, at once).
Other launchers (Open MPI's, Slurm's) report a worker that exits before
``MPI_Finalize`` themselves. The watcher is this file run as a script
(standard library only); the worker speaks to it through a pipe.
"""
import atexit
import os
import select
import signal
import subprocess
import sys
import time

_STARTED, _FINISHED = b"started;", b"finished;"
_MARGIN_SECONDS = 60.0  # past the others' timeout: their MPI_Abort ends the job before the watcher lets go
#: Where MPI launchers put this process's rank and the job's size (hydra, Open MPI, PMIx, Slurm).
_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
_watcher = []  # (this process's pid, the pipe's write end), once a watcher runs


def _launcher_value(names):
    """The first of the environment ``names`` holding a number, as text ("?" if none)."""
    return next((os.environ[name] for name in names if os.environ.get(name, "").isdigit()), "?")


def start(start_timeout, timeout):
    """Start this worker's watcher, once per process, in a job of 2 workers or more.

    Args:
        start_timeout: seconds MPI may take to start (None: MPI has
            started already, or no bound).
        timeout: the collectives' timeout (None: they wait forever, and a
            vanished worker is only reported).
    """
    hydra_fd = os.environ.get("PMI_FD", "")
    size = _launcher_value(_SIZE_VARIABLES)
    hydra = hydra_fd.isdigit()
    if _watcher or not (size.isdigit() and int(size) > 1) or not (hydra or start_timeout is not None):
        return
    read_end, write_end = os.pipe()
    hold = 0.0 if timeout is None else float(timeout) + _MARGIN_SECONDS
    arguments = [str(read_end), hydra_fd if hydra else "-1", repr(start_timeout or 0.0), repr(hold),
                 _launcher_value(_RANK_VARIABLES), size]
    try:
        subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__), *arguments],
                         pass_fds=(read_end, int(hydra_fd)) if hydra else (read_end,),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    except OSError:  # no watcher (no process left to start): the launcher's own behaviour
        os.close(write_end)
        return
    finally:
        os.close(read_end)
    _watcher.append((os.getpid(), write_end))
    atexit.register(finished)


def started():
    """Tell the watcher that MPI has started (the start is no longer timed)."""
    _say(_STARTED)


def finished():
    """Tell the watcher that this worker ends on purpose (Python's exit, or
    ``MPI_Abort``, which ends the job with its own error)."""
    if _say(_FINISHED):
        os.close(_watcher.pop()[1])


def _say(word):
    # A child forked from this worker shares the pipe: only the worker speaks.
    if not _watcher or _watcher[0][0] != os.getpid():
        return False
    try:
        os.write(_watcher[0][1], word)
    except OSError:  # the watcher is gone
        return False
    return True


# ------------------------------------------------------------- the watcher
def _watch(read_end, hydra_fd, start_timeout, hold, rank, size):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the worker's process group: the worker answers it
    worker, said = os.getppid(), b""
    if start_timeout:
        said = _listen(read_end, said, _STARTED, start_timeout)
        if said is None:
            return  # the worker ended before MPI started: its launcher reports it
        if _STARTED not in said:
            os.write(2, (f"minikeras worker {rank} of {size}: starting MPI (MPI_Init) got no answer from the other "
                         f"workers within {start_timeout:g} s; a worker ended before it started MPI (see its output "
                         "above) or is still starting. Ending this worker, which ends the job. Raise the timeout "
                         "(timeout=...) if workers start that far apart.\n").encode())
            if hydra_fd >= 0:
                os.close(hydra_fd)  # the launcher sees this worker's connection close, as for any crash
            os.kill(worker, signal.SIGKILL)  # MPI_Init holds the interpreter's lock: no gentler way ends it
            return
    if hydra_fd < 0 or _listen(read_end, said, _FINISHED, None) is not None:
        return
    message = (f"minikeras worker {rank} of {size}: its process ended without exiting Python (os._exit, a crash or "
               "a signal; see its output above). If the other workers are still in the job, ")
    message += (f"they stop with WorkerTimeoutError within their timeout ({hold - _MARGIN_SECONDS:g} s) and end it "
                "with an error." if hold else "the job ends now (timeout=None).")
    os.write(2, (message + "\n").encode())
    os.close(2)  # the launcher forwards the worker's output until every copy of it is closed
    deadline = time.monotonic() + hold
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([hydra_fd], [], [], left)
        if readable and not os.read(hydra_fd, 4096):
            return  # the launcher closed its end: the job is over


def _listen(read_end, said, word, timeout):
    """What the worker said until ``word`` (or the pipe closed, or ``timeout``
    seconds passed); None once the pipe is closed without ``word``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while word not in said:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        readable, _, _ = select.select([read_end], [], [], left)
        if not readable:
            return said  # timed out
        chunk = os.read(read_end, 64)
        if not chunk:
            return said if word in said else None
        said += chunk
    return said


if __name__ == "__main__":
    _read_end, _hydra_fd, _start_timeout, _hold, _rank, _size = sys.argv[1:7]
    _watch(int(_read_end), int(_hydra_fd), float(_start_timeout), float(_hold), _rank, _size)
