//! Counters read over regions of a program ([`Regions`]): the per-draw pattern of the C API, for other
//! bindings. One engine (and one gatord session) stays open; each [`Regions::read`] ends a region, reads
//! every counter over it, and starts the next.

use crate::enabling::{ChoiceError, Counters};
use crate::error::{Error, NoValue};
use crate::{CounterId, Lizard};

/// One counter's reading over a region.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionReading {
    /// The counter, by the name users type (its key).
    pub counter: String,
    /// Its reading, or why it has none over this region.
    pub value: Result<f64, NoValue>,
}

/// An engine whose counters are read region by region.
#[derive(Debug)]
pub struct Regions {
    lizard: Lizard,
    ids: Vec<CounterId>,
    keys: Vec<String>,
}

impl Regions {
    /// Chooses and enables `counters` on `lizard` ([`Lizard::enable_counters`]); no region runs yet.
    pub fn new(mut lizard: Lizard, counters: &Counters) -> Result<Regions, ChoiceError> {
        let ids = lizard.enable_counters(counters)?.ids;
        let keys = ids
            .iter()
            .map(|&id| lizard.counter(id).map(|c| c.key.clone()))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Regions { lizard, ids, keys })
    }

    /// The counters read, by the names users type, in the order chosen.
    pub fn counters(&self) -> &[String] {
        &self.keys
    }

    /// The engine.
    pub fn lizard(&self) -> &Lizard {
        &self.lizard
    }

    /// Starts a region.
    pub fn start(&mut self) -> Result<(), Error> {
        self.lizard.start_capture()
    }

    /// Ends the region started last, reads every counter over it, and starts the next region.
    ///
    /// A region the sources sent no sample for (one shorter than a sample period, or a loaded machine)
    /// is a reading in which every counter has no value and says why, not an error.
    pub fn read(&mut self) -> Result<Vec<RegionReading>, Error> {
        ended(self.lizard.stop_capture())?;
        let mut readings = Vec::with_capacity(self.ids.len());
        for (&id, key) in self.ids.iter().zip(&self.keys) {
            let value = match self.lizard.read_double(id) {
                Ok(value) => Ok(value),
                Err(Error::NoValue { reason, .. }) => Err(reason),
                Err(error) => return Err(error),
            };
            readings.push(RegionReading {
                counter: key.clone(),
                value,
            });
        }
        self.lizard.start_capture()?;
        Ok(readings)
    }

    /// Ends a running region and closes the engine (and its gatord session). The region is not read, so
    /// one that nothing was captured over is no error.
    pub fn close(mut self) -> Result<(), Error> {
        let stopped = match self.lizard.is_capturing() {
            true => ended(self.lizard.stop_capture()),
            false => Ok(()),
        };
        let closed = self.lizard.close_session();
        stopped.and(closed)
    }
}

/// A region's stop: that nothing was captured over it is its reading (no value, and why), not a failure.
fn ended(stopped: Result<(), Error>) -> Result<(), Error> {
    match stopped {
        Err(Error::NothingCaptured(_)) => Ok(()),
        other => other,
    }
}
