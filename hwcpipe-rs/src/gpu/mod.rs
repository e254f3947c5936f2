//! Mali GPU counters through the kbase kernel driver.
