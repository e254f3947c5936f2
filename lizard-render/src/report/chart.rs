//! One counter's time series as an inline SVG chart: value axis in the counter's unit, time axis shared by
//! every chart of the report, the capture window shaded, trace records as markers.

use std::fmt::{self, Write};

use lizard_core::capture::{Capture, CapturedCounter, TraceRecord, Units};

use super::axis::{self, Axis};
use super::escape::Esc;

/// The chart size in SVG user units (CSS pixels at 100 %).
const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 210.0;
/// The plot area inside the chart: room for the value labels on the left and the time labels below.
const LEFT: f64 = 70.0;
const RIGHT: f64 = WIDTH - 14.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = HEIGHT - 42.0;
/// Up to this many samples each also get a dot, so that sparse series stay visible.
const MAX_DOTS: usize = 40;

/// The time axis every chart of a report shares, so that the same instant sits at the same x in each.
/// Time 0 is the capture's first sample; trace records before it get negative times.
#[derive(Debug, Clone)]
pub struct TimeFrame {
    origin_ns: u64,
    unit: &'static str,
    unit_ns: f64,
    axis: Axis,
    /// The capture window (first to last sample), in `unit` since the origin.
    window: Option<(f64, f64)>,
}

impl TimeFrame {
    /// The frame covering a capture's samples and trace records.
    pub fn new(capture: &Capture) -> TimeFrame {
        let records = capture.trace_records.iter().map(|r| r.timestamp_ns);
        let (first, last) = match capture.window_ns {
            Some([first, last]) => (first, last),
            None => {
                let first = records.clone().min().unwrap_or(0);
                (first, first)
            }
        };
        let lo = records.clone().min().map_or(first, |r| r.min(first));
        let hi = records.max().map_or(last, |r| r.max(last)).max(lo);
        let (unit, unit_ns) = axis::time_unit((hi - lo) as f64);
        let mut frame = TimeFrame {
            origin_ns: first,
            unit,
            unit_ns,
            axis: Axis::exact(0.0, 0.0),
            window: None,
        };
        frame.axis = Axis::exact(frame.at(lo), frame.at(hi));
        frame.window = capture
            .window_ns
            .map(|[first, last]| (frame.at(first), frame.at(last)));
        frame
    }

    /// The unit of the time axis (`s`, `ms` or `µs`).
    pub fn unit(&self) -> &'static str {
        self.unit
    }

    /// `t_ns` in the frame's unit, since its origin.
    pub fn at(&self, t_ns: u64) -> f64 {
        (i128::from(t_ns) - i128::from(self.origin_ns)) as f64 / self.unit_ns
    }

    /// The x coordinate of `t_ns` in a chart.
    fn x(&self, t_ns: u64) -> f64 {
        LEFT + self.axis.fraction(self.at(t_ns)) * (RIGHT - LEFT)
    }
}

/// The label of a counter's value axis: its unit, per sample for a delta counter.
pub fn value_label(counter: &CapturedCounter) -> String {
    let units = match counter.value_units() {
        Units::Unknown => "count".to_owned(),
        units => units.to_string(),
    };
    if counter.is_delta() {
        format!("{units} per sample")
    } else {
        units
    }
}

/// Writes the chart of `counter`'s samples, which must not be empty, with `records` as markers.
pub fn write(
    out: &mut String,
    counter: &CapturedCounter,
    frame: &TimeFrame,
    records: &[TraceRecord],
) -> fmt::Result {
    let mut samples = counter.points();
    samples.sort_by_key(|&(t, _)| t);
    let (lo, hi) = samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, v)| {
            (lo.min(v), hi.max(v))
        });
    let values = Axis::from_zero(lo, hi);
    let y = |v: f64| BOTTOM - values.fraction(v) * (BOTTOM - TOP);
    write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{} over time\" \
         data-left=\"{LEFT}\" data-right=\"{RIGHT}\" data-t0=\"{}\" data-t1=\"{}\" data-unit=\"{}\">",
        Esc(&counter.info.counter),
        frame.axis.lo,
        frame.axis.hi,
        frame.unit
    )?;
    if let Some((first, last)) = frame.window {
        let x0 = LEFT + frame.axis.fraction(first) * (RIGHT - LEFT);
        let x1 = LEFT + frame.axis.fraction(last) * (RIGHT - LEFT);
        write!(
            out,
            "<rect class=\"window\" x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{}\">\
             <title>capture window: first to last sample</title></rect>",
            (x1 - x0).max(0.5),
            BOTTOM - TOP
        )?;
    }
    write_value_axis(out, &values, &value_label(counter), y)?;
    write_time_axis(out, frame)?;
    write!(out, "<polyline class=\"series\" points=\"")?;
    for (index, &(t, v)) in envelope(&samples, |t| frame.x(t)).iter().enumerate() {
        let gap = if index == 0 { "" } else { " " };
        write!(out, "{gap}{:.1},{:.1}", frame.x(t), y(v))?;
    }
    out.push_str("\"/>");
    if samples.len() <= MAX_DOTS {
        for &(t, v) in &samples {
            write!(
                out,
                "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"/>",
                frame.x(t),
                y(v)
            )?;
        }
    }
    write_markers(out, frame, records)?;
    write!(
        out,
        "<rect class=\"frame\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/>\
         <line class=\"cursor\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{BOTTOM}\"/></svg>",
        RIGHT - LEFT,
        BOTTOM - TOP
    )
}

fn write_value_axis(
    out: &mut String,
    values: &Axis,
    label: &str,
    y: impl Fn(f64) -> f64,
) -> fmt::Result {
    out.push_str("<g class=\"axis value\">");
    for (value, text) in values.ticks().into_iter().zip(values.labels()) {
        let at = y(value);
        write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{at:.1}\" y2=\"{at:.1}\"/>\
             <text class=\"tick\" x=\"{}\" y=\"{at:.1}\">{text}</text>",
            LEFT - 6.0
        )?;
    }
    let middle = (TOP + BOTTOM) / 2.0;
    write!(
        out,
        "<text class=\"label\" transform=\"translate(14 {middle}) rotate(-90)\">{}</text></g>",
        Esc(label)
    )
}

fn write_time_axis(out: &mut String, frame: &TimeFrame) -> fmt::Result {
    out.push_str("<g class=\"axis time\">");
    for (time, text) in frame.axis.ticks().into_iter().zip(frame.axis.labels()) {
        let at = LEFT + frame.axis.fraction(time) * (RIGHT - LEFT);
        write!(
            out,
            "<line class=\"tick\" x1=\"{at:.1}\" x2=\"{at:.1}\" y1=\"{BOTTOM}\" y2=\"{}\"/>\
             <text class=\"tick\" x=\"{at:.1}\" y=\"{}\">{text}</text>",
            BOTTOM + 5.0,
            BOTTOM + 18.0
        )?;
    }
    write!(
        out,
        "<text class=\"label\" x=\"{}\" y=\"{}\">time since the first sample ({})</text></g>",
        (LEFT + RIGHT) / 2.0,
        HEIGHT - 6.0,
        frame.unit
    )
}

/// One marker per trace record, or per group of records that fall on the same pixel column, each with a
/// tooltip naming its records.
fn write_markers(out: &mut String, frame: &TimeFrame, records: &[TraceRecord]) -> fmt::Result {
    let mut sorted: Vec<&TraceRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.timestamp_ns);
    let column = |r: &TraceRecord| frame.x(r.timestamp_ns).floor() as i64;
    for group in sorted.chunk_by(|a, b| column(a) == column(b)) {
        let x = frame.x(group[0].timestamp_ns);
        write!(
            out,
            "<g class=\"marker\"><title>{} trace record{}",
            group.len(),
            if group.len() == 1 { "" } else { "s" }
        )?;
        for r in group.iter().take(5) {
            write!(
                out,
                "\n{} at {:.3} {} ({}:{}, pid {}, seq {}, {} bytes)",
                Esc(&r.module),
                frame.at(r.timestamp_ns),
                frame.unit,
                Esc(&r.file),
                r.line,
                r.pid,
                r.seq,
                r.bytes
            )?;
        }
        if group.len() > 5 {
            write!(out, "\n…")?;
        }
        write!(
            out,
            "</title><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{BOTTOM}\"/>\
             <path d=\"M{:.1} {TOP}h8l-4 7z\"/></g>",
            x - 4.0
        )?;
    }
    Ok(())
}

/// The samples to draw: per pixel column, the first, lowest, highest and last sample, in time order, so
/// that a long series keeps its shape (every peak and dip) in a polyline of at most four points a pixel.
fn envelope(samples: &[(u64, f64)], x: impl Fn(u64) -> f64) -> Vec<(u64, f64)> {
    let mut kept = Vec::new();
    for column in samples.chunk_by(|a, b| x(a.0).floor() == x(b.0).floor()) {
        let low = column
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .map_or(0, |(i, _)| i);
        let high = column
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .map_or(0, |(i, _)| i);
        let mut picks = [0, low, high, column.len() - 1];
        picks.sort_unstable();
        let mut previous = None;
        for pick in picks {
            if previous != Some(pick) {
                kept.push(column[pick]);
                previous = Some(pick);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_keeps_every_peak_and_dip_of_a_column() {
        let samples: Vec<(u64, f64)> = (0..100).map(|t| (t, (t % 7) as f64)).collect();
        // Ten samples a pixel column.
        let kept = envelope(&samples, |t| t as f64 / 10.0);
        assert!(kept.len() <= 40, "{}", kept.len());
        for column in samples.chunks(10) {
            let max = column.iter().map(|s| s.1).fold(f64::MIN, f64::max);
            let min = column.iter().map(|s| s.1).fold(f64::MAX, f64::min);
            assert!(kept.iter().any(|k| column.contains(k) && k.1 == max));
            assert!(kept.iter().any(|k| column.contains(k) && k.1 == min));
        }
        assert!(kept.windows(2).all(|w| w[0].0 < w[1].0), "in time order");
        // One sample a column: all of them.
        assert_eq!(envelope(&samples, |t| t as f64), samples);
    }
}
