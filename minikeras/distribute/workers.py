"""DeviceWorkers: one persistent thread per device, to run replicas at once.

Device scopes, ``no_grad`` and CuPy's current device are thread-local, so a
thread that only ever works for one device keeps them straight; NumPy
releases the GIL inside BLAS and large elementwise loops, so CPU replicas
overlap too. The threads live as long as their owner and are daemons.
"""
import queue
import threading

from minikeras.distribute.all_reduce import ReplicaAborted


def _serve(device, tasks):
    # A replica thread's ops run their blocks in the thread: the replicas
    # already share the cores (Device.worker_context).
    with device.worker_context():
        _serve_tasks(tasks)


def _serve_tasks(tasks):
    while True:
        item = tasks.get()
        if item is None:
            return
        task, outcomes, index, finished = item
        item = None
        try:
            outcomes[index] = (True, task())
        except BaseException as error:  # handed to the caller, who re-raises it
            outcomes[index] = (False, error)
        # Drop the task (and the batch it holds) before waiting for the next.
        task = outcomes = None
        finished.release()


class DeviceWorkers:
    """A thread per device; :meth:`run` runs one callable on each and waits.

    Args:
        devices: the logical devices; thread ``i`` serves ``devices[i]``.
    """

    def __init__(self, devices):
        self._queues = [queue.SimpleQueue() for _ in devices]
        self._threads = []
        for device, tasks in zip(devices, self._queues):
            thread = threading.Thread(target=_serve, args=(device, tasks), name=f"minikeras-replica-{device.name}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    @property
    def threads(self):
        """The worker threads, one per device."""
        return list(self._threads)

    def run(self, tasks):
        """Run ``tasks[i]`` on thread ``i`` (all at once) and wait for all.

        Args:
            tasks: one callable per device (None: nothing to do there).

        Returns:
            The tasks' return values (None for skipped devices).

        Raises:
            The first exception a task raised, preferring a real failure to
            the :class:`ReplicaAborted` it caused in the other replicas.
        """
        if self._queues is None:
            raise RuntimeError("These device workers were closed.")
        outcomes = [(True, None)] * len(tasks)
        finished = threading.Semaphore(0)
        started = 0
        for index, (task, pending) in enumerate(zip(tasks, self._queues)):
            if task is not None:
                pending.put((task, outcomes, index, finished))
                started += 1
        for _ in range(started):
            finished.acquire()
        errors = [value for ok, value in outcomes if not ok]
        results = [value if ok else None for ok, value in outcomes]
        outcomes = None
        if not errors:
            return results
        error = next((e for e in errors if not isinstance(e, ReplicaAborted)), errors[0])
        errors = results = None
        try:
            raise error
        finally:
            error = None  # no frame -> exception -> traceback -> frame cycle keeping tensors alive

    def close(self):
        """Stop the threads (idempotent)."""
        if self._queues is None:
            return
        for pending in self._queues:
            pending.put(None)
        self._queues = None
