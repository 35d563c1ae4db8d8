"""Training: losses, optimizers whose update is compiled into the training
step, and :class:`TrainStep`, one compiled call per step (forward, backward
through :func:`dlc.value_and_grad`, update).

    params = dlc.nn.Sequential(...).state_dict()      # or any {name: array}
    step = dlc.optim.TrainStep(loss_fn, params, dlc.optim.Adam(1e-3))
    for x, y in batches:
        loss = step(x, y)          # step.params: the updated parameters

``loss_fn(params, *batch)`` returns a float scalar, with ``params`` a dict
of traced arrays. Optimizers are functional (``init(params)``,
``update(params, grads, state)`` on traced values), with PyTorch's
definitions, so that a step matches ``torch.optim``'s step for step.
"""

import inspect

import numpy as np

from . import ops as O
from .autodiff import _scalar as _c, value_and_grad
from .composite import one_hot
from .errors import DTypeError, ShapeError


# -- losses ---------------------------------------------------------------------------

def cross_entropy(logits, labels):
    """Mean cross-entropy of `logits` [N, C] against integer class `labels`
    [N] (PyTorch's ``F.cross_entropy`` with the default mean reduction)."""
    if len(logits.shape) != 2:
        raise ShapeError(f"cross_entropy: logits must be [N, C], but got {logits!r}")
    if getattr(labels, "dtype", np.dtype("float32")).kind not in "iu":
        raise DTypeError(f"cross_entropy: labels must be integer class indices, but got "
                         f"{labels!r}")
    picked = O.log_softmax(logits, axis=-1) * one_hot(labels, logits.shape[1],
                                                      dtype=logits.dtype)
    return O.negative(O.sum(picked)) / np.asarray(logits.shape[0], logits.dtype)


def mse_loss(prediction, target):
    """Mean squared error (PyTorch's ``F.mse_loss``)."""
    difference = prediction - target
    return O.mean(difference * difference)


# -- optimizers -----------------------------------------------------------------------

class SGD:
    """Stochastic gradient descent with momentum, dampening, Nesterov and L2
    weight decay, as ``torch.optim.SGD``."""

    def __init__(self, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        _check_positive("lr", lr)
        self.lr, self.momentum, self.dampening = float(lr), float(momentum), float(dampening)
        self.weight_decay, self.nesterov = float(weight_decay), bool(nesterov)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and no dampening")

    def init(self, params):
        """The optimizer's state for `params` (a list of arrays): momentum
        buffers, and the step count."""
        state = [np.zeros((), np.float32)]
        if self.momentum:
            state += [np.zeros_like(p) for p in params]
        return state

    def update(self, params, grads, state):
        step, buffers = state[0], state[1:]
        new_params, new_buffers = [], []
        for index, (p, g) in enumerate(zip(params, grads)):
            if self.weight_decay:
                g = g + p * _c(p, self.weight_decay)
            if self.momentum:
                # PyTorch: the first step's buffer is the gradient itself.
                first = O.equal(step, np.zeros((), np.float32))
                b = O.where(first, g, buffers[index] * _c(g, self.momentum)
                            + g * _c(g, 1.0 - self.dampening))
                new_buffers.append(b)
                g = g + b * _c(g, self.momentum) if self.nesterov else b
            new_params.append(p - g * _c(p, self.lr))
        return new_params, [step + np.ones((), np.float32)] + new_buffers


class Adam:
    """Adam, as ``torch.optim.Adam`` (L2 weight decay added to the
    gradient); :class:`AdamW` decouples it."""

    decoupled = False

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        _check_positive("lr", lr)
        self.lr, (self.beta1, self.beta2) = float(lr), (float(betas[0]), float(betas[1]))
        self.eps, self.weight_decay = float(eps), float(weight_decay)

    def init(self, params):
        return ([np.zeros((), np.float32)] + [np.zeros_like(p) for p in params]
                + [np.zeros_like(p) for p in params])

    def update(self, params, grads, state):
        count = len(params)
        step = state[0] + np.ones((), np.float32)
        firsts, seconds = state[1:1 + count], state[1 + count:]
        correction1 = np.ones((), np.float32) - O.power(np.asarray(self.beta1, np.float32), step)
        correction2 = np.ones((), np.float32) - O.power(np.asarray(self.beta2, np.float32), step)
        new_params, new_firsts, new_seconds = [], [], []
        for p, g, m, v in zip(params, grads, firsts, seconds):
            if self.weight_decay and self.decoupled:
                p = p * _c(p, 1.0 - self.lr * self.weight_decay)
            elif self.weight_decay:
                g = g + p * _c(p, self.weight_decay)
            m = m * _c(m, self.beta1) + g * _c(g, 1.0 - self.beta1)
            v = v * _c(v, self.beta2) + g * g * _c(g, 1.0 - self.beta2)
            m_hat = m / O.astype(correction1, p.dtype)
            v_hat = v / O.astype(correction2, p.dtype)
            new_params.append(p - m_hat * _c(p, self.lr) / (O.sqrt(v_hat) + _c(p, self.eps)))
            new_firsts.append(m)
            new_seconds.append(v)
        return new_params, [step] + new_firsts + new_seconds


class AdamW(Adam):
    """AdamW (decoupled weight decay), as ``torch.optim.AdamW``."""

    decoupled = True

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(lr, betas, eps, weight_decay)


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a positive number, but got {value!r}")


# -- the training step ------------------------------------------------------------------

class TrainStep:
    """One compiled training step: ``step(*batch)`` computes
    ``loss_fn(params, *batch)``, its gradient and the optimizer's update in
    one call of one compiled function and returns the loss. The parameters
    (``step.params``, a dict of numpy arrays: copies of the ones given) and
    the optimizer's state are updated in place, in their arrays (donated to
    the compiled step, see dlc.jit's donate_argnums): an array taken from
    ``step.params`` changes at each step.

    With ``buffers`` (a dict of arrays that are state, not trained: a
    dlc.nn model's ``named_buffers()``, its batch norms' running
    statistics), ``loss_fn(params, buffers, *batch)`` returns ``(loss,
    new_buffers)`` (:func:`dlc.nn.functional_call` with ``buffers=`` gives
    them) and ``step.buffers`` is updated in place the same way."""

    def __init__(self, loss_fn, params, optimizer, buffers=None):
        if not isinstance(params, dict) or not params:
            raise TypeError("TrainStep: params must be a non-empty {name: array} dict")
        if buffers is not None and not isinstance(buffers, dict):
            raise TypeError("TrainStep: buffers must be a {name: array} dict")
        self.names = list(params)
        # The step's own copies: updated in place at every step.
        self.params = {k: np.array(v, order="C", copy=True) for k, v in params.items()}
        for name, value in self.params.items():
            if value.dtype.kind != "f":
                raise DTypeError(f"TrainStep: parameter {name!r} has dtype {value.dtype}; "
                                 f"only float parameters are trained")
        self.has_buffers = buffers is not None
        self.buffer_names = list(buffers or {})
        self.buffers = {k: np.array(v, order="C", copy=True)
                        for k, v in (buffers or {}).items()}
        self.optimizer = optimizer
        self.state = [np.asarray(s) for s in optimizer.init(list(self.params.values()))]
        names, count, state_count = self.names, len(self.names), len(self.state)
        buffer_names, has_buffers = self.buffer_names, self.has_buffers
        buffer_count = len(buffer_names)

        def flat_step(*arrays):
            params, state = list(arrays[:count]), list(arrays[count:count + state_count])
            stored = arrays[count + state_count:count + state_count + buffer_count]
            batch = arrays[count + state_count + buffer_count:]

            def loss_of(*values):
                if not has_buffers:
                    return loss_fn(dict(zip(names, values)), *batch), ()
                out = loss_fn(dict(zip(names, values)), dict(zip(buffer_names, stored)),
                              *batch)
                if not (isinstance(out, tuple) and len(out) == 2 and
                        isinstance(out[1], dict)):
                    raise TypeError("TrainStep: with buffers, loss_fn must return (loss, "
                                    "new_buffers), new_buffers a {name: value} dict")
                loss, new = out
                missing = sorted(set(buffer_names) - set(new))
                if missing:
                    raise KeyError(f"TrainStep: loss_fn's new buffers lack {missing}")
                return loss, tuple(new[n] for n in buffer_names)

            (loss, new_buffers), grads = value_and_grad(
                loss_of, argnums=tuple(range(count)), has_aux=True)(*params)
            new_params, new_state = optimizer.update(params, list(grads), state)
            return tuple(new_params) + tuple(new_state) + tuple(new_buffers) + (loss,)

        self._batch_arity = len(inspect.signature(loss_fn).parameters) - 1 - has_buffers
        self._donated = count + state_count + buffer_count
        flat_step.__name__ = getattr(loss_fn, "__name__", "train_step") + "_step"
        flat_step.__signature__ = inspect.Signature([
            inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for i in range(self._donated + self._batch_arity)])
        from .jit import jit
        # Parameters, optimizer state and buffers are donated: the compiled
        # step writes the new values into their arrays (in place where
        # nothing reads the old value afterwards) and returns those arrays.
        self._jit = jit(flat_step, donate_argnums=tuple(range(self._donated)))

    def function(self, fn):
        """``fn(params, *args)`` (``fn(params, buffers, *args)`` for a step
        with buffers) compiled with the parameters as arguments: the returned
        callable takes ``*args`` and reads ``self.params`` (and
        ``self.buffers``) at each call (an evaluation on the current
        parameters, without recompiling as they change)."""
        names, count = self.names, len(self.names)
        buffer_names, has_buffers = self.buffer_names, self.has_buffers
        extra = len(buffer_names)
        arity = len(inspect.signature(fn).parameters) - 1 - has_buffers

        def flat(*arrays):
            params = dict(zip(names, arrays[:count]))
            if has_buffers:
                return fn(params, dict(zip(buffer_names, arrays[count:count + extra])),
                          *arrays[count + extra:])
            return fn(params, *arrays[count:])

        flat.__name__ = getattr(fn, "__name__", "function").strip("<>") or "function"
        flat.__signature__ = inspect.Signature([
            inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for i in range(count + extra + arity)])
        from .jit import jit
        compiled = jit(flat)
        return lambda *args: compiled(*[self.params[n] for n in names],
                                      *[self.buffers[n] for n in buffer_names], *args)

    def lower(self, *batch):
        """The :class:`dlc.Lowered` of the step (its IR at every stage)."""
        return self._jit.lower(*self._arguments(batch))

    def _arguments(self, batch):
        if len(batch) != self._batch_arity:
            raise TypeError(f"TrainStep: the loss function takes {self._batch_arity} batch "
                            f"argument(s) after params{', buffers' if self.has_buffers else ''}"
                            f", but got {len(batch)}")
        return ([self.params[n] for n in self.names] + self.state +
                [self.buffers[n] for n in self.buffer_names] + list(batch))

    def __call__(self, *batch):
        results = self._jit(*self._arguments(batch))
        count, state_count = len(self.names), len(self.state)
        self.params = dict(zip(self.names, results[:count]))
        self.state = list(results[count:count + state_count])
        self.buffers = dict(zip(self.buffer_names,
                                results[count + state_count:self._donated]))
        return results[-1]
