"""Python threads: one compiled function called from several threads at once,
compiles in several threads at once, the compile cache changed by one thread
while others call, and imported models (PyTorch, ONNX) the same way. Every
result is compared bit for bit with the same call made on one thread."""

import threading
import warnings

import numpy as np
import pytest

import dlc

THREADS = 4


def run_threads(work, count=THREADS):
    """Runs work(index) on `count` threads started together; re-raises the
    first exception of any of them."""
    barrier = threading.Barrier(count)
    errors, results = [], [None] * count

    def body(index):
        try:
            barrier.wait()
            results[index] = work(index)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
        assert not thread.is_alive(), "a thread hung"
    if errors:
        raise errors[0]
    return results


@pytest.fixture
def two_threads_each():
    saved = dlc.get_num_threads()
    dlc.set_num_threads(2)
    yield
    dlc.set_num_threads(saved)


def network(x, w):
    y = dlc.relu(x @ w)
    return dlc.softmax(y, axis=-1) * 2.0 + dlc.sum(y, axis=0)


def test_one_function_called_from_threads_is_bit_exact(two_threads_each):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 256)).astype(np.float32)
    inputs = [rng.standard_normal((128, 256)).astype(np.float32) for _ in range(THREADS)]
    f = dlc.jit(network, parallel_min_work=0)  # parallel loops inside each call
    wants = [f(x, w) for x in inputs]

    def work(index):
        for _ in range(300):
            np.testing.assert_array_equal(f(inputs[index], w), wants[index])
        return True

    assert all(run_threads(work))


def test_compiles_in_several_threads_at_once():
    """Each thread compiles its own shapes of one function, and a function of
    its own; the results match those compiled on one thread afterwards."""
    rng = np.random.default_rng(1)
    shared = dlc.jit(lambda a, b: dlc.tanh(a @ b) + 1.0)
    shapes = [(3 + i, 5 + 2 * i, 7 + i) for i in range(THREADS)]
    operands = [(rng.standard_normal((m, k)).astype(np.float32),
                 rng.standard_normal((k, n)).astype(np.float32)) for m, k, n in shapes]

    def work(index):
        a, b = operands[index]
        own = dlc.jit(lambda x: dlc.exp(x - dlc.max(x, axis=-1, keepdims=True)) * (index + 1))
        return shared(a, b), own(a)

    got = run_threads(work)
    assert shared.cache_size() == THREADS
    for index, (a, b) in enumerate(operands):
        np.testing.assert_array_equal(got[index][0], dlc.jit(lambda a, b: dlc.tanh(a @ b) + 1.0)(a, b))
        np.testing.assert_allclose(got[index][1], np.exp(a - a.max(-1, keepdims=True)) * (index + 1),
                                   rtol=1e-6)


def test_the_same_signature_compiled_by_threads_at_once():
    f = dlc.jit(lambda a: a * 3.0 - 1.0)
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    for got in run_threads(lambda _: f(a)):
        np.testing.assert_array_equal(got, a * 3 - 1)
    assert f.cache_size() == 1


def test_cache_cleared_and_evicted_while_other_threads_call(monkeypatch):
    """clear_cache() and LRU eviction (a bound of 2 signatures, 4 shapes in
    turn) from one thread while the others call: calls recompile as needed,
    never fail."""
    monkeypatch.setenv("DLC_JIT_CACHE_SIZE", "2")
    f = dlc.jit(lambda a: dlc.sqrt(dlc.abs(a)) + a)
    arrays = [np.linspace(-3, 3, 16 * (i + 1), dtype=np.float32) for i in range(THREADS)]
    stop = threading.Event()

    def clearer():
        while not stop.is_set():
            f.clear_cache()
            dlc.clear_cache()

    side = threading.Thread(target=clearer)
    side.start()
    try:
        def work(index):
            for turn in range(40):
                a = arrays[(index + turn) % THREADS]
                np.testing.assert_array_equal(f(a), np.sqrt(np.abs(a)) + a)
            return True
        assert all(run_threads(work))
    finally:
        stop.set()
        side.join()
    assert f.cache_size() <= 2


def test_nn_module_called_from_threads():
    rng = np.random.default_rng(2)
    model = dlc.nn.Sequential(dlc.nn.Conv2d(3, 8, 3, padding=1), dlc.nn.ReLU(),
                              dlc.nn.Conv2d(8, 4, 3, stride=2), dlc.nn.Flatten())
    f = dlc.jit(model)
    inputs = [rng.standard_normal((2, 3, 12, 12)).astype(np.float32) for _ in range(THREADS)]
    wants = [f(x) for x in inputs]

    def work(index):
        for _ in range(50):
            np.testing.assert_array_equal(f(inputs[index]), wants[index])
        return True

    assert all(run_threads(work))


def test_imported_torch_model_from_threads():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(),
                                 torch.nn.LayerNorm(64), torch.nn.Linear(64, 10)).eval()
    example = np.random.default_rng(3).standard_normal((4, 32)).astype(np.float32)
    f = dlc.from_torch(module, example, dynamic_batch=True)
    inputs = [np.random.default_rng(10 + i).standard_normal((2 + i, 32)).astype(np.float32)
              for i in range(THREADS)]

    def work(index):  # the first calls compile (dynamic batch: one version)
        return [f(inputs[index]) for _ in range(30)]

    results = run_threads(work)
    for x, got in zip(inputs, results):
        with torch.no_grad():
            want = module(torch.from_numpy(x)).numpy()
        for value in got:
            np.testing.assert_array_equal(value, got[0])
        np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-5)


def test_imported_onnx_model_falling_back_to_static_batches_from_threads():
    """A model that computes with its batch size gives up the dynamic batch
    on the first call (with a warning): threads that hit it together must all
    get results, none the internal DynamicDimensionError."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
         helper.make_node("ReduceProd", ["sf"], ["n"], keepdims=0),
         helper.make_node("Mul", ["x", "n"], ["y"])],
        "scale_by_size",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    f = dlc.from_onnx(model, dynamic_batch=True)
    inputs = [np.full((i + 1, 3), 0.5, np.float32) for i in range(THREADS)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = run_threads(lambda index: f(inputs[index]))
    assert not f.dynamic_batch
    for x, got in zip(inputs, results):
        np.testing.assert_array_equal(got, x * x.size)
