"""Mali GPU counters from Python through Arm's real kbase driver r35p0 over its dummy GPU model, loaded in the
emulated Arm system (LIZARD_KBASE_GPU names the GPU it pretends to be: tBEx is a Job Manager GPU, tODx a CSF
one). Every counter of the model is set to a distinct value with KBASE_IOCTL_HWCNT_SET, so each sample's truth
is known; Arm's equations, evaluated by lizard_rs.mali over the capture's window, judge its derived counters.
"""

import math

import numpy as np
import pytest

import lizard_rs
from guest import SHADER_CORES, L2_SLICES, distinct, kbase_gpu, note, one_dump, set_counters  # noqa: F401
from lizard_rs import mali


@pytest.fixture(scope="module")
def captured(kbase_gpu):
    """One capture of every GPU counter the local source lists, after setting the model's values."""
    set_counters(distinct)
    listed = lizard_rs.counters(gatord=False)
    names = [c.name for c in listed if c.source == "gpu"]
    assert len(names) > 100, f"{kbase_gpu}: {len(names)} GPU counters listed"
    capture = lizard_rs.capture(duration=1.0, counters=names, gatord=False, interval=0.01)
    return kbase_gpu, capture


def test_a_capture_gives_the_gpus_counters_as_arrays_with_the_drivers_values(captured):
    gpu, capture = captured
    product, driver = capture.run["gpu"], capture.run["gpu_driver"]
    assert product.startswith("Mali-") and driver.split()[0] in ("JM", "CSF"), (product, driver)
    assert capture.sampling["gpu"]["pace"] == "periodic", capture.sampling["gpu"]
    database = {c.name: c for c in mali.gpu(product).counters}
    gpu_counters = [c for c in capture.counters if c.source == "gpu"]
    assert all(c.timestamps.dtype == np.uint64 and c.values.dtype == np.float64 for c in gpu_counters)
    samples = len(capture["MaliGPUActiveCy"])
    assert samples >= 50, f"{gpu}: {samples} samples of 1 s at 10 ms"
    # Every hardware counter of Arm's database, in every sample: a whole number of dumps of what was set
    # (the model reports the values again at each dump; the driver folds dumps it took in one period).
    checked = 0
    for counter in gpu_counters:
        spec = database.get(counter.name)
        if spec is None or not spec.hardware or spec.unavailable:
            continue
        per_dump = one_dump(spec.block, spec.index)
        dumps = counter.values / per_dump
        assert np.all(dumps == np.round(dumps)) and np.all(dumps >= 0), (counter.name, counter.values[:5])
        assert counter.value == np.sum(counter.values)
        checked += 1
    assert checked > 50, f"{gpu}: {checked} hardware counters checked"
    active = capture["MaliGPUActiveCy"]
    per_dump = one_dump(database["MaliGPUActiveCy"].block, database["MaliGPUActiveCy"].index)
    dumps = int(active.value // per_dump)
    note(
        f"kbase {gpu}: lizard_rs.capture() on {product} (kbase {driver}): {len(gpu_counters)} GPU counters as "
        f"NumPy arrays, {samples} samples in 1 s; {checked} hardware counters of Arm's database read whole dumps "
        f"of the values set, in every sample (MaliGPUActiveCy {active.value:,.0f} = {dumps} dumps of {per_dump:,})"
    )


def constant_counters(database):
    """The derived counters that are one constant (MaliConfigCoreCount = MALI_CONFIG_SHADER_CORE_COUNT)."""
    return {
        c.name: c.inputs[0]
        for c in database
        if not c.hardware and len(c.inputs) == 1 and c.inputs[0].startswith("MALI_CONFIG_") and c.equation
        and c.equation.strip() == c.inputs[0]
    }


def test_lizard_rs_mali_over_the_captures_window_agrees_with_its_derived_counters(captured):
    gpu, capture = captured
    product = capture.run["gpu"]
    db = mali.gpu(product)
    database = {c.name: c for c in db.counters}
    by_name = {c.name: c for c in capture.counters}
    # The hardware counters' totals over the window, and the GPU's constants as the capture read them.
    values = {
        name: c.value for name, c in by_name.items() if name in database and database[name].hardware and c.value is not None
    }
    constants = {}
    for name, constant in constant_counters(db.counters).items():
        if name in by_name and by_name[name].value is not None:
            constants[constant] = by_name[name].value
    assert constants.get("MALI_CONFIG_SHADER_CORE_COUNT") == SHADER_CORES, constants
    assert constants.get("MALI_CONFIG_L2_CACHE_COUNT") == L2_SLICES, constants
    # The window: from the capture's start to the GPU's last dump (the GPU is sampled apart from the CPU).
    last = max(int(c.timestamps[-1]) for c in by_name.values() if c.source == "gpu" and len(c))
    window_s = (last - capture.started_ns) / 1e9
    constants["MALI_CONFIG_TIME_SPAN"] = window_s
    agreed = no_value = 0
    for name, counter in by_name.items():
        spec = database.get(name)
        if spec is None or spec.hardware or counter.counter_class != "derived" or name in constant_counters(db.counters):
            continue
        try:
            want = db.evaluate(name, values, constants)
        except lizard_rs.MaliError as error:
            # A divisor of 0 over these totals: the capture has no value either, and says which.
            assert error.kind == "Eval", (name, error)
            assert counter.value is None and counter.no_value and counter.no_value.endswith(" is 0"), (
                name,
                counter.value,
                counter.no_value,
            )
            no_value += 1
            continue
        got = counter.value
        assert got is not None, (name, counter.no_value)
        # Rates divide by the window, which the capture measures on its own clock readings: 1e-6.
        assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12), (name, got, want)
        agreed += 1
    assert agreed > 50, f"{gpu}: {agreed} derived counters compared"
    note(
        f"kbase {gpu}: lizard_rs.mali.gpu('{product}').evaluate over the capture's {window_s:.3f} s window: "
        f"{agreed} derived counters agree with the capture's values, {no_value} have none in both (a divisor "
        f"of 0); the constants read as the model's: {SHADER_CORES} shader cores, {L2_SLICES} L2 slice"
    )
