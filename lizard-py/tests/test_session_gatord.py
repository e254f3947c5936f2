"""A Session through gatord (the simulator): one gatord session kept across regions, as liblizard.so keeps
it between a host program's Start and Stop calls, each region read by its own window."""

import lizard_rs


def test_a_session_reads_gatords_counters_region_by_region(gatord_sim):
    name = "ARM_Mali-G78_GPU_ACTIVE"
    with lizard_rs.Session(counters=[name], gatord=gatord_sim) as session:
        assert session.counters == [name]
        readings = []
        for _ in range(3):
            readings.append(session.read())
    for reading in readings:
        assert set(reading) == {name}
        assert reading[name] is not None and reading[name] > 0
    assert session.no_value == {}


def test_a_session_with_a_named_gatord_that_does_not_answer_is_a_gatord_error():
    import pytest

    with pytest.raises(lizard_rs.GatordError):
        lizard_rs.Session(gatord="127.0.0.1:1")
