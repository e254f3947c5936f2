//! Ratios of functions measured in one criterion group.
//!
//! Each function runs through [`Ratios::iter`], which is criterion's `iter_custom` with the sample's
//! time per iteration kept. After the group, [`Ratios::print`] prints, for every function, the median
//! of its sample times against the baseline's median: `baseline time / function time`, so 0.25 means a
//! quarter of the baseline's throughput and 3.0 three times it. Warm-up calls are not kept: a function's
//! samples are the last `sample_size` calls criterion made.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Bencher;

/// Per-iteration sample times of the functions of one group, in measurement order.
#[derive(Debug, Default)]
pub struct Ratios {
    samples: RefCell<Vec<(String, Vec<f64>)>>,
}

impl Ratios {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// Measures `f` like `Bencher::iter` and keeps each sample's time per iteration under `name`.
    pub fn iter<R>(&self, b: &mut Bencher<'_>, name: &str, mut f: impl FnMut() -> R) {
        self.iter_custom(b, name, |iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            start.elapsed()
        });
    }

    /// Measures like `Bencher::iter_custom` (`f` runs `iters` iterations and returns their time) and keeps
    /// each sample's time per iteration under `name`.
    pub fn iter_custom(&self, b: &mut Bencher<'_>, name: &str, mut f: impl FnMut(u64) -> Duration) {
        b.iter_custom(|iters| {
            let elapsed = f(iters);
            self.record(name, elapsed, iters);
            elapsed
        });
    }

    fn record(&self, name: &str, elapsed: Duration, iters: u64) {
        let per_iter = elapsed.as_secs_f64() / iters.max(1) as f64;
        let mut samples = self.samples.borrow_mut();
        match samples.iter_mut().find(|(n, _)| n == name) {
            Some((_, times)) => times.push(per_iter),
            None => samples.push((name.to_owned(), vec![per_iter])),
        }
    }

    /// Median time per iteration of the last `sample_size` samples of `name`.
    pub fn median(&self, name: &str, sample_size: usize) -> Option<f64> {
        let samples = self.samples.borrow();
        let (_, times) = samples.iter().find(|(n, _)| n == name)?;
        let mut last: Vec<f64> = times[times.len().saturating_sub(sample_size)..].to_vec();
        last.sort_by(f64::total_cmp);
        last.get(last.len() / 2).copied()
    }

    /// Prints `group: name = R x baseline` for every function measured besides `baseline` (functions a
    /// filter skipped are not printed).
    pub fn print(&self, group: &str, baseline: &str, sample_size: usize) {
        let Some(base) = self.median(baseline, sample_size) else {
            return;
        };
        let names: Vec<String> = self
            .samples
            .borrow()
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|n| n != baseline)
            .collect();
        for name in names {
            if let Some(t) = self.median(&name, sample_size) {
                println!(
                    "ratio {group}/{name} = {:.4} x {baseline} (median {:.1} us vs {:.1} us)",
                    base / t,
                    t * 1e6,
                    base * 1e6
                );
            }
        }
    }
}
