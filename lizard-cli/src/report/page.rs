//! The whole report page: a header with the capture's facts, the summary table, a section per counter
//! with its chart, and the trace records.

use std::fmt::{self, Write};

use serde_json::Value as Json;

use super::axis::{self, short_number};
use super::chart::{self, TimeFrame};
use super::document::{Capture, CapturedCounter, TraceRecord};
use super::escape::Esc;
use crate::output::reading_text;

/// The page's style sheet.
const STYLE: &str = include_str!("report.css");
/// The first script: shows any later script failure in the page itself.
const ON_ERROR: &str = include_str!("onerror.js");
/// The last script: checks the charts were laid out and moves a time cursor across all of them.
const SCRIPT: &str = include_str!("report.js");
/// Trace records listed in the table at most (every record still has its marker).
const MAX_LISTED_RECORDS: usize = 1000;

/// The report of `capture` as one HTML document that needs nothing else: no network, no files (its
/// Content-Security-Policy forbids fetching anything).
pub fn html(capture: &Capture) -> String {
    let mut out = String::with_capacity(16 * 1024);
    // Writing into a String cannot fail.
    let _ = write_page(&mut out, capture);
    out
}

fn write_page(out: &mut String, capture: &Capture) -> fmt::Result {
    let frame = TimeFrame::new(capture);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
         <meta name=\"generator\" content=\"lizard {}\">\n\
         <title>lizard capture: {} counters</title>\n<style>\n{STYLE}</style>\n<script>\n{ON_ERROR}</script>\n\
         </head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        capture.counters.len()
    )?;
    write_header(out, capture, &frame)?;
    write_summary(out, capture)?;
    out.push_str("<h2>Time series</h2>\n");
    for counter in &capture.counters {
        write_counter(out, counter, &frame, &capture.trace_records)?;
    }
    write_records(out, &capture.trace_records, &frame)?;
    write!(
        out,
        "<footer>Made by lizard {} from a capture; every value is as captured (multiplier and MHz → Hz \
         applied).</footer>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    )
}

fn write_header(out: &mut String, capture: &Capture, frame: &TimeFrame) -> fmt::Result {
    out.push_str("<header>\n<h1>Capture report</h1>\n<dl class=\"facts\">\n");
    match capture.window_ns {
        Some([first, last]) => write!(
            out,
            "<dt>capture window</dt><dd>{} {}, first to last sample (shaded on the charts)</dd>\n",
            short_number(frame.at(last) - frame.at(first)),
            frame.unit()
        )?,
        None => out.push_str("<dt>capture window</dt><dd>none: no counter got a sample</dd>\n"),
    }
    if let Some(wall) = capture.wall_s {
        write!(out, "<dt>command time</dt><dd>{wall:.3} s</dd>\n")?;
    }
    let without = capture
        .counters
        .iter()
        .filter(|c| c.value.is_none())
        .count();
    write!(
        out,
        "<dt>counters</dt><dd>{}{}</dd>\n",
        capture.counters.len(),
        match without {
            0 => String::new(),
            n => format!(", {n} without a value"),
        }
    )?;
    write!(
        out,
        "<dt>trace records</dt><dd>{}{}</dd>\n</dl>\n",
        capture.trace_records.len(),
        if capture.trace_records.is_empty() {
            ""
        } else {
            ", marked ▼ on every chart"
        }
    )?;
    if let Some(warning) = &capture.warning {
        write!(out, "<p class=\"warning\">warning: {}</p>\n", Esc(warning))?;
    }
    out.push_str("<output id=\"cursor\"></output>\n</header>\n");
    Ok(())
}

fn write_summary(out: &mut String, capture: &Capture) -> fmt::Result {
    out.push_str(
        "<h2>Summary</h2>\n<table class=\"summary\">\n<thead><tr><th class=\"num\">id</th><th>counter</th>\
         <th>source</th><th>units</th><th>class</th><th class=\"num\">samples</th>\
         <th class=\"num\">value</th></tr></thead>\n<tbody>\n",
    );
    for c in &capture.counters {
        write!(
            out,
            "<tr{}><td class=\"num\">{}</td><td><a href=\"#c{}\">{}</a></td><td>{}</td><td>{}</td>\
             <td>{}</td><td class=\"num\">{}</td>",
            if c.value.is_none() {
                " class=\"no-value\""
            } else {
                ""
            },
            c.id,
            c.id,
            Esc(&c.counter),
            Esc(&source_text(c)),
            Esc(&c.units),
            Esc(&c.class),
            c.samples.len()
        )?;
        match (&c.value, &c.no_value) {
            (Some(value), _) => write!(
                out,
                "<td class=\"num\">{}</td></tr>\n",
                reading_text(&Json::Number(value.clone()))
            )?,
            (None, reason) => write!(
                out,
                "<td class=\"reason\">no value: {}</td></tr>\n",
                Esc(reason.as_deref().unwrap_or_default())
            )?,
        }
    }
    out.push_str("</tbody>\n</table>\n");
    Ok(())
}

/// Where a counter's values come from and what they count: `gatord, system`, `cpu, process 42`.
fn source_text(c: &CapturedCounter) -> String {
    match (c.source.as_str(), c.scope.as_str()) {
        (source, "") => source.to_owned(),
        ("", scope) => scope.to_owned(),
        (source, scope) => format!("{source}, {scope}"),
    }
}

fn write_counter(
    out: &mut String,
    c: &CapturedCounter,
    frame: &TimeFrame,
    records: &[TraceRecord],
) -> fmt::Result {
    write!(
        out,
        "<section class=\"counter\" id=\"c{}\">\n<h3>{}",
        c.id,
        Esc(&c.counter)
    )?;
    let heading = [c.title.as_str(), c.name.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty() && *s != c.counter)
        .collect::<Vec<_>>()
        .join(" · ");
    if !heading.is_empty() {
        write!(out, " <small>{}</small>", Esc(&heading))?;
    }
    out.push_str("</h3>\n<p class=\"about\">");
    if !c.description.is_empty() {
        write!(out, "{} ", Esc(&c.description))?;
    }
    write!(
        out,
        "<span class=\"facts\">{} · {} · {}",
        Esc(&source_text(c)),
        Esc(&c.class),
        sampling_html(c)
    )?;
    if let Some(value) = &c.value {
        write!(
            out,
            " · value {} {}",
            reading_text(&Json::Number(value.clone())),
            Esc(&c.units)
        )?;
    }
    if c.dropped > 0 {
        write!(out, " · {} samples dropped", c.dropped)?;
    }
    out.push_str("</span></p>\n");
    if let (None, Some(reason)) = (&c.value, &c.no_value) {
        write!(out, "<p class=\"no-value\">no value: {}</p>\n", Esc(reason))?;
    }
    if !c.samples.is_empty() {
        chart::write(out, c, frame, records)?;
        out.push('\n');
    }
    out.push_str("</section>\n");
    Ok(())
}

/// `16 samples, one every 1 ms, 1000 to 1015 cycles`, as HTML: how many samples, how far apart (the median
/// spacing) and their range.
fn sampling_html(c: &CapturedCounter) -> String {
    let count = c.samples.len();
    let mut text = format!("{count} sample{}", if count == 1 { "" } else { "s" });
    let mut times: Vec<u64> = c.samples.iter().map(|s| s.0).collect();
    times.sort_unstable();
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    if let Some(&median) = gaps.get(gaps.len() / 2) {
        let (unit, unit_ns) = axis::time_unit(median as f64 * 2.0);
        let _ = write!(
            text,
            ", one every {} {unit}",
            short_number(median as f64 / unit_ns)
        );
    }
    let (lo, hi) = c
        .samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s.1), hi.max(s.1))
        });
    if count > 0 {
        let _ = write!(
            text,
            ", {} to {} {}",
            short_number(lo),
            short_number(hi),
            Esc(&chart::value_label(c))
        );
    }
    text
}

fn write_records(out: &mut String, records: &[TraceRecord], frame: &TimeFrame) -> fmt::Result {
    if records.is_empty() {
        return Ok(());
    }
    write!(
        out,
        "<h2>Trace records</h2>\n<table class=\"records\">\n<thead><tr><th class=\"num\">time ({})</th>\
         <th>module</th><th>source</th><th class=\"num\">pid</th><th class=\"num\">seq</th>\
         <th class=\"num\">bytes</th></tr></thead>\n<tbody>\n",
        frame.unit()
    )?;
    let mut sorted: Vec<&TraceRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.timestamp_ns);
    for r in sorted.iter().take(MAX_LISTED_RECORDS) {
        write!(
            out,
            "<tr><td class=\"num\">{:.3}</td><td>{}</td><td>{}:{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            frame.at(r.timestamp_ns),
            Esc(&r.module),
            Esc(&r.file),
            r.line,
            r.pid,
            r.seq,
            r.bytes
        )?;
    }
    out.push_str("</tbody>\n</table>\n");
    if sorted.len() > MAX_LISTED_RECORDS {
        write!(
            out,
            "<p>… and {} more records (each is marked on the charts).</p>\n",
            sorted.len() - MAX_LISTED_RECORDS
        )?;
    }
    Ok(())
}
