//! One counter of a [`MaliCounters`] catalog evaluated on values a caller gives
//! ([`MaliCounters::evaluate_given`]): a window's totals, one sample's values, numbers typed by hand. A derived
//! input that is not given is computed by its own equation from what is given.

use super::equation::EvalError;
use super::mali_counter::{MaliCounter, MaliCounters, MaliInput, MaliUnavailable};

/// Why [`MaliCounters::evaluate_given`] has no value for a counter.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MaliEvalError {
    /// The counter is not one of this catalog's (it came from another catalog).
    #[error("counter #{index} is not one of {gpu}'s")]
    NotInCatalog {
        /// The catalog's GPU.
        gpu: &'static str,
        /// The counter's position.
        index: usize,
    },
    /// The counter cannot be computed on this GPU.
    #[error("{counter} cannot be computed on {gpu}")]
    Unavailable {
        /// The catalog's GPU.
        gpu: &'static str,
        /// The counter's machine name.
        counter: &'static str,
        /// Why.
        #[source]
        reason: MaliUnavailable,
    },
    /// An input of the counter's equation was not given: a hardware counter or a constant. A hardware
    /// counter evaluated itself has no equation, so it needs itself.
    #[error("{counter} needs {input}, which was not given")]
    MissingInput {
        /// The counter whose equation needs the input.
        counter: &'static str,
        /// The input: a counter's machine name or a constant's (`MALI_CONFIG_*`).
        input: &'static str,
    },
    /// The equation has no value on these inputs (a division by zero).
    #[error("{counter} has no value on these inputs")]
    Eval {
        /// The counter.
        counter: &'static str,
        /// Why.
        #[source]
        source: EvalError,
    },
}

impl MaliCounters {
    /// The value of `counter` computed by its equation, never read from `given`; each input of the equation
    /// is `given` (a counter or a constant), or, for a derived counter not given, computed by its own
    /// equation in the same way. The catalog's equations have no cycles (a counter in one is unavailable),
    /// so the computation ends.
    ///
    /// ```
    /// use hwcpipe::gpu::tables::spec_layout;
    /// use hwcpipe::gpu::{MaliCounters, MaliInput};
    /// let g78 = MaliCounters::for_layout(spec_layout("Mali-G78").unwrap(), 64);
    /// let util = g78.by_name("MaliFragQueueUtil").unwrap();
    /// let (active, busy) = (g78.by_name("MaliFragQueueActiveCy"), g78.by_name("MaliGPUActiveCy"));
    /// let given = |input: MaliInput| match input {
    ///     MaliInput::Counter(c) if Some(c) == active => Some(250.0),
    ///     MaliInput::Counter(c) if Some(c) == busy => Some(1000.0),
    ///     _ => None,
    /// };
    /// assert_eq!(g78.evaluate_given(util, &given), Ok(25.0));
    /// ```
    pub fn evaluate_given(
        &self,
        counter: MaliCounter,
        given: &dyn Fn(MaliInput) -> Option<f64>,
    ) -> Result<f64, MaliEvalError> {
        let info = self.info(counter).ok_or(MaliEvalError::NotInCatalog {
            gpu: self.gpu(),
            index: counter.index(),
        })?;
        let name = info.name();
        if let Err(reason) = &info.availability {
            return Err(MaliEvalError::Unavailable {
                gpu: self.gpu(),
                counter: name,
                reason: reason.clone(),
            });
        }
        let Some((expr, inputs)) = self.equation(counter) else {
            return Err(MaliEvalError::MissingInput {
                counter: name,
                input: name,
            });
        };
        let mut numbers = vec![f64::NAN; inputs.len()];
        for used in expr.inputs() {
            let input = inputs[used];
            numbers[used] = match (given(input), input) {
                (Some(value), _) => value,
                (None, MaliInput::Counter(counter)) => self.evaluate_given(counter, given)?,
                (None, MaliInput::Constant(constant)) => {
                    return Err(MaliEvalError::MissingInput {
                        counter: name,
                        input: constant.name(),
                    })
                }
            };
        }
        expr.eval(&numbers).map_err(|source| MaliEvalError::Eval {
            counter: name,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::tables::spec_layout;
    use crate::gpu::MaliConstant;

    fn g78() -> MaliCounters {
        MaliCounters::for_layout(spec_layout("Mali-G78").unwrap(), 64)
    }

    /// `given` as a lookup by machine name (counters) and by constant.
    fn by_name<'a>(
        catalog: &'a MaliCounters,
        counters: &'a [(&str, f64)],
        constants: &'a [(MaliConstant, f64)],
    ) -> impl Fn(MaliInput) -> Option<f64> + 'a {
        move |input| match input {
            MaliInput::Counter(c) => {
                let name = catalog.info(c)?.name();
                counters.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
            }
            MaliInput::Constant(k) => constants.iter().find(|(c, _)| *c == k).map(|&(_, v)| v),
        }
    }

    #[test]
    fn a_derived_input_not_given_is_computed_by_its_own_equation() {
        let g78 = g78();
        let any = g78.by_name("MaliAnyUtil").unwrap();
        let values = [("MaliAnyActiveCy", 400.0), ("MaliGPUActiveCy", 100.0)];
        let cores = [(MaliConstant::ShaderCores, 4.0)];
        let given = by_name(&g78, &values, &cores);
        assert_eq!(g78.evaluate_given(any, &given), Ok(100.0));
    }

    #[test]
    fn the_counter_itself_is_never_read_from_the_values() {
        let g78 = g78();
        let util = g78.by_name("MaliFragQueueUtil").unwrap();
        let values = [
            ("MaliFragQueueActiveCy", 250.0),
            ("MaliGPUActiveCy", 1000.0),
            ("MaliFragQueueUtil", -1.0),
        ];
        let given = by_name(&g78, &values, &[]);
        assert_eq!(g78.evaluate_given(util, &given), Ok(25.0));
    }

    #[test]
    fn what_is_missing_is_named() {
        let g78 = g78();
        let util = g78.by_name("MaliFragQueueUtil").unwrap();
        let values = [("MaliFragQueueActiveCy", 250.0)];
        let error = g78
            .evaluate_given(util, &by_name(&g78, &values, &[]))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "MaliGPUActiveCy needs MaliGPUActiveCy, which was not given"
        );
        let rate = g78.by_name("MaliExtBusRdBPS").unwrap();
        let values = [("MaliExtBusRdBy", 100.0)];
        let error = g78
            .evaluate_given(rate, &by_name(&g78, &values, &[]))
            .unwrap_err();
        assert_eq!(
            error,
            MaliEvalError::MissingInput {
                counter: "MaliExtBusRdBPS",
                input: "MALI_CONFIG_TIME_SPAN"
            }
        );
        let span = [(MaliConstant::TimeSpan, 2.0)];
        assert_eq!(
            g78.evaluate_given(rate, &by_name(&g78, &values, &span)),
            Ok(50.0)
        );
    }

    #[test]
    fn a_division_by_zero_is_no_value() {
        let g78 = g78();
        let util = g78.by_name("MaliFragQueueUtil").unwrap();
        let values = [("MaliFragQueueActiveCy", 250.0), ("MaliGPUActiveCy", 0.0)];
        let error = g78
            .evaluate_given(util, &by_name(&g78, &values, &[]))
            .unwrap_err();
        assert!(matches!(
            error,
            MaliEvalError::Eval {
                counter: "MaliFragQueueUtil",
                ..
            }
        ));
    }

    #[test]
    fn an_unavailable_counter_and_one_of_another_catalog_are_refused() {
        // A driver that dumps 6 values per block cannot read GPU_ACTIVE (index 6), nor what needs it.
        let small = MaliCounters::for_layout(spec_layout("Mali-G78").unwrap(), 6);
        let util = small.by_name("MaliFragQueueUtil").unwrap();
        let error = small.evaluate_given(util, &|_| Some(1.0)).unwrap_err();
        assert!(
            matches!(
                error,
                MaliEvalError::Unavailable {
                    gpu: "Mali-G78",
                    counter: "MaliFragQueueUtil",
                    ..
                }
            ),
            "{error:?}"
        );
        let empty = MaliCounters::default();
        let error = empty.evaluate_given(util, &|_| Some(1.0)).unwrap_err();
        assert!(
            matches!(error, MaliEvalError::NotInCatalog { .. }),
            "{error:?}"
        );
    }
}
