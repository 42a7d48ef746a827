"""Stateful RNNs (Keras's ``stateful=True``): the final states of one batch
are the initial states of the next.

The states are kept on the layer as ``layer.states`` (one Tensor per state,
``(batch, units)``), created at the first call with that call's batch size,
which every later call must keep (Keras: "the batch size must be static").
They are constants to the next batch: gradients stop at the batch boundary
(truncated back-propagation through time), as with Keras's non-trainable
state variables. ``reset_state()``/``reset_states()`` zero them; like Keras 3
they are not weights, so model files do not store them and a loaded model
starts from zeros.

While a functional model is being built, the layer is run on a probe batch
(``layers/input.py``); the probe neither creates nor changes the states, and
a stateful layer on a symbolic input of unknown batch size is refused as in
Keras.
"""
from minikeras import ops
from minikeras.autograd import no_grad

#: Set by the functional API while it probes a layer: the symbolic batch size
#: (an int, or None when the batch axis is unknown).
PROBING = "probing"


class StatefulStates:
    """Mixed into the RNN layers: ``states``, ``reset_state()``, the call hooks."""

    states = None

    def _stateful_initial_states(self, initial_state, batch):
        """The initial states for this call: the kept states when stateful and
        none are passed, else ``initial_state`` as given."""
        if not self.stateful or initial_state is not None:
            return initial_state
        from minikeras.layers.base import _context

        probing = getattr(_context, PROBING, False)
        if probing is not False:
            if probing is None:
                raise ValueError(
                    f"Layer '{self.name}' ({type(self).__name__}): when using stateful=True in a RNN, the batch "
                    "size must be static. Found a dynamic batch size: give the Input a batch_size (or "
                    "batch_shape), or call the layer on data first."
                )
            return None
        if self.states is None:
            return None
        expected = self.states[0].shape[0]
        if batch != expected:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}): if an RNN is stateful, the batch size of the input "
                f"sequences must be the same as the batch size of the kept states.\n- Expected batch size: "
                f"{expected}\n- Received batch size: {batch}"
            )
        return list(self.states)

    def _keep_final_states(self, final_states):
        """Keep this call's final states for the next call (detached)."""
        if not self.stateful:
            return
        from minikeras.layers.base import _context

        if getattr(_context, PROBING, False) is not False:
            return
        self.states = [state.detach() for state in final_states]

    def reset_state(self):
        """Zero the kept states (Keras)."""
        if self.states is not None:
            with no_grad():
                self.states = [ops.zeros_like(state) for state in self.states]

    def reset_states(self):
        """Keras's compatibility alias of :meth:`reset_state`."""
        self.reset_state()
