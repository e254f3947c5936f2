//! How a synchronous device record's client waits for the server's acknowledgement: asking again and again
//! for a while, giving the processor away between tries, or sleeping at once.
//!
//! Neither is always faster. A client that sleeps lets its processor idle, and in a virtual machine waking an
//! idle processor takes longer than the server's answer to a small record (tens of microseconds against a
//! few). But where every processor is busy with other work, a client that keeps asking takes time from the
//! server it waits for. [`AckWait::Adaptive`] measures both on the client's own records and keeps the
//! faster: each epoch of [`EPOCH`] records ends with [`TRIAL`] records waited the other way, and the way
//! whose median wait was shorter by a tenth or more is kept for the next epoch. The `trace_device` bench
//! measures the three ways side by side (`benches/README.md`).

use std::time::Duration;

/// Records per epoch of [`AckWait::Adaptive`], the trial included.
pub const EPOCH: u32 = 256;

/// Records of each epoch waited the other way.
pub const TRIAL: usize = 16;

/// How long a spinning client asks before it sleeps, by default: 50 µs.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);

/// How a synchronous device record waits for its acknowledgement ([`crate::ClientConfig::ack_wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckWait {
    /// Sleep until it comes.
    Sleep,
    /// Ask for at most this long, yielding the processor between tries, then sleep until it comes.
    Spin(Duration),
    /// Spin (for at most `spin`) or sleep, whichever this client measured to be faster lately (the default,
    /// with [`DEFAULT_SPIN`]).
    Adaptive {
        /// How long a spinning wait asks before it sleeps.
        spin: Duration,
    },
}

impl Default for AckWait {
    fn default() -> Self {
        AckWait::Adaptive { spin: DEFAULT_SPIN }
    }
}

/// The chooser of [`AckWait::Adaptive`]: which way the next record waits, from the waits measured so far.
#[derive(Debug, Clone)]
pub(crate) struct Chooser {
    /// The way asked for.
    wait: AckWait,
    /// Whether the current way spins.
    spinning: bool,
    /// Records of this epoch so far.
    count: u32,
    /// The last waits of the current way.
    current: [Duration; TRIAL],
    /// The waits of this epoch's trial of the other way.
    trial: [Duration; TRIAL],
}

impl Chooser {
    /// A chooser for `wait`; an adaptive one starts spinning.
    pub(crate) fn new(wait: AckWait) -> Chooser {
        Chooser {
            wait,
            spinning: !matches!(wait, AckWait::Sleep),
            count: 0,
            current: [Duration::ZERO; TRIAL],
            trial: [Duration::ZERO; TRIAL],
        }
    }

    /// How long the next record asks before it sleeps (zero: it sleeps at once).
    pub(crate) fn spin(&self) -> Duration {
        let spin = match self.wait {
            AckWait::Sleep => return Duration::ZERO,
            AckWait::Spin(spin) => return spin,
            AckWait::Adaptive { spin } => spin,
        };
        if self.spinning != self.in_trial() {
            spin
        } else {
            Duration::ZERO
        }
    }

    /// Whether the current way spins.
    #[cfg(test)]
    fn spinning(&self) -> bool {
        self.spinning
    }

    /// Whether the next record belongs to the trial of the other way.
    fn in_trial(&self) -> bool {
        self.count >= EPOCH - TRIAL as u32
    }

    /// Takes the wait of a record that waited as [`Chooser::spin`] said.
    pub(crate) fn waited(&mut self, took: Duration) {
        if !matches!(self.wait, AckWait::Adaptive { .. }) {
            return;
        }
        let trial_start = EPOCH - TRIAL as u32;
        if self.in_trial() {
            self.trial[(self.count - trial_start) as usize] = took;
        } else {
            self.current[self.count as usize % TRIAL] = took;
        }
        self.count += 1;
        if self.count == EPOCH {
            self.count = 0;
            if median(&self.trial) * 10 < median(&self.current) * 9 {
                self.spinning = !self.spinning;
            }
        }
    }
}

/// The median of `samples`.
fn median(samples: &[Duration; TRIAL]) -> Duration {
    let mut sorted = *samples;
    sorted.sort_unstable();
    sorted[TRIAL / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Runs `epochs` epochs where a spinning wait takes `spin` and a sleeping one `sleep`; gives the ways
    /// chosen at each epoch's end.
    fn run(chooser: &mut Chooser, epochs: u32, spin: Duration, sleep: Duration) -> Vec<bool> {
        let mut ways = Vec::new();
        for _ in 0..epochs {
            for _ in 0..EPOCH {
                let took = if chooser.spin() > Duration::ZERO {
                    spin
                } else {
                    sleep
                };
                chooser.waited(took);
            }
            ways.push(chooser.spinning());
        }
        ways
    }

    #[test]
    fn an_adaptive_client_keeps_the_faster_way() {
        let mut chooser = Chooser::new(AckWait::default());
        // Idle processors: spinning answers in 5 µs, sleeping in 20.
        assert_eq!(run(&mut chooser, 3, us(5), us(20)), [true, true, true]);
        // Busy ones: spinning takes the server's time (21 µs), sleeping does not (7).
        assert_eq!(run(&mut chooser, 2, us(21), us(7)), [false, false]);
        // And back.
        assert_eq!(run(&mut chooser, 1, us(5), us(20)), [true]);
        // A difference under a tenth changes nothing.
        assert_eq!(run(&mut chooser, 2, us(10), us(10)), [true, true]);
    }

    #[test]
    fn a_trial_is_a_sixteenth_of_an_epoch_in_the_other_way() {
        let mut chooser = Chooser::new(AckWait::default());
        let mut spun = 0;
        for _ in 0..EPOCH {
            if chooser.spin() > Duration::ZERO {
                spun += 1;
            }
            chooser.waited(us(5));
        }
        assert_eq!(spun, EPOCH - TRIAL as u32);
    }

    #[test]
    fn fixed_ways_do_not_change() {
        let mut sleep = Chooser::new(AckWait::Sleep);
        let mut spin = Chooser::new(AckWait::Spin(us(30)));
        for _ in 0..3 * EPOCH {
            assert_eq!(sleep.spin(), Duration::ZERO);
            assert_eq!(spin.spin(), us(30));
            sleep.waited(us(1));
            spin.waited(us(100));
        }
    }
}
