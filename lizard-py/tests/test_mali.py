"""Arm's Mali database from Python, checked against the Rust crate's own numbers."""

import pytest

from lizard_rs import mali


def test_the_database_lists_its_gpus():
    names = mali.gpus()
    assert "Mali-G78" in names and "Mali-G710" in names
    assert names == sorted(names)


def test_a_gpu_gives_its_counters_equations_and_constants():
    g78 = mali.gpu("mali-g78")
    assert g78.name == "Mali-G78"
    assert g78.architecture == "Valhall"
    counters = {c.name: c for c in g78.counters}
    assert len(counters) == len(g78) > 100
    active = counters["MaliGPUActiveCy"]
    assert active.hardware and active.block is not None and active.index is not None
    assert active.equation is None and active.inputs == []
    util = counters["MaliFragQueueUtil"]
    assert not util.hardware and util.equation
    assert util.inputs == ["MaliFragQueueActiveCy", "MaliGPUActiveCy"]
    assert ("MALI_CONFIG_SHADER_CORE_COUNT", "shader_cores") in g78.constants
    assert g78.counter_named("MaliFragQueueUtil").units == util.units


def test_an_equation_is_evaluated_on_the_values_given():
    g78 = mali.gpu("Mali-G78")
    values = {"MaliFragQueueActiveCy": 250.0, "MaliGPUActiveCy": 1000.0}
    assert g78.evaluate("MaliFragQueueUtil", values) == pytest.approx(25.0)
    # A value given for the counter itself is not read back: its equation is evaluated.
    values["MaliFragQueueUtil"] = -1.0
    assert g78.evaluate("MaliFragQueueUtil", values) == pytest.approx(25.0)


def test_a_derived_input_not_given_is_computed_by_its_own_equation():
    g78 = mali.gpu("Mali-G78")
    # MaliAnyUtil = MaliAnyActiveCy / MaliConfigCoreCount / MaliGPUActiveCy * 100, and MaliConfigCoreCount
    # is itself the constant MALI_CONFIG_SHADER_CORE_COUNT.
    values = {"MaliAnyActiveCy": 400.0, "MaliGPUActiveCy": 100.0}
    assert g78.evaluate("MaliAnyUtil", values, {"shader_cores": 4}) == pytest.approx(100.0)
    assert g78.evaluate("MaliAnyUtil", values, {"MALI_CONFIG_SHADER_CORE_COUNT": 8}) == pytest.approx(50.0)


def test_a_rate_divides_by_the_time_span():
    g78 = mali.gpu("Mali-G78")
    values = {"MaliExtBusRdBy": 100.0}
    assert g78.evaluate("MaliExtBusRdBPS", values, {"time_span_s": 2.0}) == pytest.approx(50.0)


def test_what_an_evaluation_lacks_is_a_mali_error_naming_it():
    import lizard_rs

    g78 = mali.gpu("Mali-G78")
    with pytest.raises(lizard_rs.MaliError, match="MaliGPUActiveCy needs MaliGPUActiveCy") as missing:
        g78.evaluate("MaliFragQueueUtil", {"MaliFragQueueActiveCy": 250.0})
    assert missing.value.kind == "MissingInput"
    with pytest.raises(lizard_rs.MaliError, match="MALI_CONFIG_TIME_SPAN") as constant:
        g78.evaluate("MaliExtBusRdBPS", {"MaliExtBusRdBy": 100.0})
    assert constant.value.kind == "MissingInput"
    with pytest.raises(lizard_rs.MaliError, match="no value on these inputs") as zero:
        g78.evaluate("MaliFragQueueUtil", {"MaliFragQueueActiveCy": 1.0, "MaliGPUActiveCy": 0.0})
    assert zero.value.kind == "Eval"
    with pytest.raises(lizard_rs.MaliError, match="no counter named 'NoSuchCounter'") as unknown:
        g78.evaluate("NoSuchCounter", {})
    assert unknown.value.kind == "UnknownCounter"
