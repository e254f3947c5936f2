//! The whole report page: a header with the capture's facts, the summary table, a section per counter
//! with its chart, and the trace records.

use std::fmt::{self, Write};

use crate::text::reading_text;
use lizard_core::capture::{Capture, CapturedCounter, Method, TraceRecord};

use super::axis::{duration_text, short_number};
use super::chart::{self, TimeFrame};
use super::escape::Esc;

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
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
         <meta name=\"generator\" content=\"lizard {}\">\n\
         <title>lizard capture: {} counters</title>\n<style>\n{STYLE}</style>\n<script>\n{ON_ERROR}</script>\n\
         </head>\n<body>",
        env!("CARGO_PKG_VERSION"),
        capture.counters.len()
    )?;
    write_header(out, capture)?;
    write_summary(out, capture)?;
    out.push_str("<h2>Time series</h2>\n");
    for counter in &capture.counters {
        write_counter(out, counter, &frame, &capture.trace_records)?;
    }
    write_records(out, &capture.trace_records, &frame)?;
    writeln!(
        out,
        "<footer>Made by lizard {} from a capture; every value is as captured (multiplier and MHz → Hz \
         applied).</footer>\n<script>\n{SCRIPT}</script>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    )
}

fn write_header(out: &mut String, capture: &Capture) -> fmt::Result {
    out.push_str("<header>\n<h1>Capture report</h1>\n<dl class=\"facts\">\n");
    match capture.window_ns {
        Some([first, last]) => writeln!(
            out,
            "<dt>capture window</dt><dd>{}, first to last sample (shaded on the charts)</dd>",
            duration_text(last.saturating_sub(first) as f64)
        )?,
        None => out.push_str("<dt>capture window</dt><dd>none: no counter got a sample</dd>\n"),
    }
    if let Some(run) = &capture.run {
        writeln!(out, "<dt>run</dt><dd>{}</dd>", Esc(&run.summary()))?;
    }
    if let Some(wall) = capture.wall_s {
        writeln!(out, "<dt>command time</dt><dd>{wall:.3} s</dd>")?;
    }
    if let Some(sampling) = &capture.sampling {
        writeln!(
            out,
            "<dt>local sampling</dt><dd{}>{}</dd>",
            if sampling.missed > 0 {
                " class=\"warning\""
            } else {
                ""
            },
            Esc(&sampling.summary())
        )?;
        if let Some(gpu) = sampling
            .gpu
            .as_ref()
            .filter(|_| sampling.method != Method::Gpu)
        {
            writeln!(
                out,
                "<dt>GPU sampling</dt><dd{}>{}</dd>",
                if gpu.degraded() {
                    " class=\"warning\""
                } else {
                    ""
                },
                Esc(&gpu.summary())
            )?;
        }
    }
    let without = capture
        .counters
        .iter()
        .filter(|c| c.value.is_none())
        .count();
    writeln!(
        out,
        "<dt>counters</dt><dd>{}{}</dd>",
        capture.counters.len(),
        match without {
            0 => String::new(),
            n => format!(", {n} without a value"),
        }
    )?;
    writeln!(
        out,
        "<dt>trace records</dt><dd>{}{}</dd>\n</dl>",
        capture.trace_records.len(),
        if capture.trace_records.is_empty() {
            ""
        } else {
            ", marked ▼ on every chart"
        }
    )?;
    if let Some(warning) = &capture.warning {
        writeln!(out, "<p class=\"warning\">warning: {}</p>", Esc(warning))?;
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
            c.info.id,
            c.info.id,
            Esc(&c.info.counter),
            Esc(&source_text(c)),
            Esc(&c.value_units().to_string()),
            Esc(c.info.class.as_str()),
            c.samples.len()
        )?;
        match (&c.value, &c.no_value) {
            (Some(value), _) => {
                writeln!(out, "<td class=\"num\">{}</td></tr>", reading_text(value))?
            }
            (None, reason) => writeln!(
                out,
                "<td class=\"reason\">no value: {}</td></tr>",
                Esc(reason.as_deref().unwrap_or_default())
            )?,
        }
    }
    out.push_str("</tbody>\n</table>\n");
    Ok(())
}

/// Where a counter's values come from and what they count: `gatord, system`, `cpu, process 42`.
fn source_text(c: &CapturedCounter) -> String {
    match (c.info.source.as_str(), c.info.scope.as_str()) {
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
        c.info.id,
        Esc(&c.info.counter)
    )?;
    let heading = [c.info.title.as_str(), c.info.name.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty() && *s != c.info.counter)
        .collect::<Vec<_>>()
        .join(" · ");
    if !heading.is_empty() {
        write!(out, " <small>{}</small>", Esc(&heading))?;
    }
    out.push_str("</h3>\n<p class=\"about\">");
    if !c.info.description.is_empty() {
        write!(out, "{} ", Esc(&c.info.description))?;
    }
    write!(
        out,
        "<span class=\"facts\">{} · {} · {}",
        Esc(&source_text(c)),
        Esc(c.info.class.as_str()),
        sampling_html(c)
    )?;
    if let Some(value) = &c.value {
        write!(
            out,
            " · value {} {}",
            reading_text(value),
            Esc(&c.value_units().to_string())
        )?;
    }
    if c.dropped > 0 {
        write!(out, " · {} samples dropped", c.dropped)?;
    }
    out.push_str("</span></p>\n");
    if let (None, Some(reason)) = (&c.value, &c.no_value) {
        writeln!(out, "<p class=\"no-value\">no value: {}</p>", Esc(reason))?;
    }
    if !c.points().is_empty() {
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
    let points = c.points();
    times.sort_unstable();
    let mut gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    if let Some(&median) = gaps.get(gaps.len() / 2) {
        let _ = write!(text, ", one every {}", duration_text(median as f64));
    }
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s.1), hi.max(s.1))
        });
    if !points.is_empty() {
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
    writeln!(
        out,
        "<h2>Trace records</h2>\n<table class=\"records\">\n<thead><tr><th class=\"num\">time ({})</th>\
         <th>module</th><th>source</th><th class=\"num\">pid</th><th class=\"num\">seq</th>\
         <th class=\"num\">bytes</th></tr></thead>\n<tbody>",
        frame.unit()
    )?;
    let mut sorted: Vec<&TraceRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.timestamp_ns);
    for r in sorted.iter().take(MAX_LISTED_RECORDS) {
        writeln!(
            out,
            "<tr><td class=\"num\">{:.3}</td><td>{}</td><td>{}:{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
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
        writeln!(
            out,
            "<p>… and {} more records (each is marked on the charts).</p>",
            sorted.len() - MAX_LISTED_RECORDS
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture like `capture --format json` writes: a counter named by a hostile daemon, one without a
    /// value, and trace records before and inside the window.
    fn capture() -> Capture {
        Capture::from_json(
            r#"{
            "window_ns": [1000000, 5000000], "wall_s": 0.25, "warning": "gatord <sent> no end marker",
            "sampling": {"interval_ns": 1000000, "sampled_ns": 4000000, "expected": 4, "delivered": 3,
                         "missed": 1, "largest_gap_ns": 2000000},
            "counters": [
                {"id": 1, "counter": "Sim_ccnt", "title": "Sim CPU", "name": "Cycles", "units": "cycles",
                 "class": "delta", "source": "gatord", "scope": "system", "value": 900,
                 "samples": [[1000000, 100], [3000000, 300], [5000000, 500]]},
                {"id": 2, "counter": "x<script>alert(1)</script>", "units": "<b>B</b>", "class": "absolute",
                 "description": "say \"hi\" & 'bye'", "value": 2.5, "samples": [[2000000, 2], [4000000, 3]]},
                {"id": 3, "counter": "Sim_idle", "units": "cycles", "class": "delta", "value": null,
                 "no_value": "unavailable here: <never sent>", "samples": []}
            ],
            "trace_records": [
                {"timestamp_ns": 500000, "seq": 0, "module": "<img src=x onerror=alert(2)>", "file": "a.c",
                 "line": 1, "pid": 7, "bytes": 0},
                {"timestamp_ns": 4000000, "seq": 1, "module": "draw", "file": "a&b.c", "line": 2, "pid": 7,
                 "bytes": 5}
            ]}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_saved_document_makes_the_same_page_as_the_capture_did() {
        // `capture --format html` renders the document it built; `report` the one `--format json` saved.
        let built = capture();
        let saved = Capture::from_json(&built.to_json()).unwrap();
        assert_eq!(html(&saved), html(&built));
    }

    #[test]
    fn every_captured_string_is_escaped() {
        let page = html(&capture());
        assert_eq!(
            page.matches("<script").count(),
            2,
            "only the report's own scripts"
        );
        assert!(!page.contains("<img") && !page.contains("<b>") && !page.contains("<sent>"));
        assert!(page.contains("x&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("&lt;img src=x onerror=alert(2)&gt;"));
        assert!(page.contains("say &quot;hi&quot; &amp; &#39;bye&#39;"));
        assert!(page.contains("a&amp;b.c:2"));
    }

    #[test]
    fn the_page_is_made_of_its_own_elements_and_fetches_nothing() {
        let page = html(&capture());
        let allowed = [
            "!DOCTYPE", "html", "head", "meta", "title", "style", "script", "body", "header", "h1",
            "h2", "h3", "dl", "dt", "dd", "p", "output", "table", "thead", "tbody", "tr", "th",
            "td", "a", "section", "small", "span", "svg", "rect", "g", "line", "text", "polyline",
            "circle", "path", "footer",
        ];
        for tag in page.split('<').skip(1) {
            let name = tag.split([' ', '>', '/', '\n']).next().unwrap_or_default();
            assert!(name.is_empty() || allowed.contains(&name), "<{name}");
        }
        for link in page.split("href=\"").skip(1) {
            assert!(link.starts_with('#'), "links stay in the page: {link:.20}");
        }
        assert!(!page.contains("http:") && !page.contains("https:") && !page.contains("url("));
        assert!(!page.contains("@import"));
        assert!(page.contains("default-src 'none'"));
    }

    #[test]
    fn each_counter_with_samples_gets_a_chart_with_units_and_markers() {
        let page = html(&capture());
        assert_eq!(page.matches("<svg class=\"chart\"").count(), 2);
        assert_eq!(page.matches("<polyline class=\"series\"").count(), 2);
        assert!(page.contains(">cycles per sample</text>"));
        assert!(page.contains(">&lt;b&gt;B&lt;/b&gt;</text>"));
        assert!(page.contains(">time since the first sample (ms)</text>"));
        // Two records on each of the two charts, the first before the first sample.
        assert_eq!(page.matches("<g class=\"marker\">").count(), 4);
        assert!(page.contains("at -0.500 ms"));
        assert_eq!(page.matches("<rect class=\"window\"").count(), 2);
    }

    #[test]
    fn a_counter_without_a_value_shows_its_reason_and_no_chart() {
        let page = html(&capture());
        assert!(page
            .contains("<td class=\"reason\">no value: unavailable here: &lt;never sent&gt;</td>"));
        let section = &page[page.find("id=\"c3\"").unwrap()..];
        let section = &section[..section.find("</section>").unwrap()];
        assert!(section.contains("<p class=\"no-value\">no value: unavailable here"));
        assert!(!section.contains("<svg"));
        assert!(page.contains("3, 1 without a value"));
        assert!(page.contains("<p class=\"warning\">warning: gatord &lt;sent&gt; no end marker"));
        assert!(page.contains(
            "<dt>local sampling</dt><dd class=\"warning\">local sampling every 1 ms by a thread: 3 of 4 \
             periods sampled, 1 missed, largest gap 2.000 ms</dd>"
        ));
    }

    #[test]
    fn a_capture_without_samples_still_makes_a_page() {
        let capture = Capture::from_json(
            r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": "delta",
                "value": null, "no_value": "no samples", "samples": []}]}"#,
        )
        .unwrap();
        let page = html(&capture);
        assert!(page.contains("none: no counter got a sample"));
        assert!(page.contains("no value: no samples"));
        assert!(!page.contains("<svg"));
        assert!(page.trim_end().ends_with("</html>"));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use lizard_core::capture::{Class, CounterInfo, Source};
    use proptest::prelude::*;

    fn counter() -> impl Strategy<Value = CapturedCounter> {
        (
            any::<String>(),
            any::<String>(),
            any::<bool>(),
            proptest::collection::vec((any::<u64>(), -1e308f64..1e308), 0..50),
            proptest::option::of(any::<String>()),
        )
            .prop_map(|(counter, units, delta, samples, reason)| CapturedCounter {
                info: CounterInfo {
                    id: 1,
                    counter,
                    source: Source::Gatord,
                    units: lizard_core::Units::parse(&units),
                    class: if delta { Class::Delta } else { Class::Absolute },
                    ..CounterInfo::default()
                },
                value: if reason.is_some() {
                    None
                } else {
                    Some(1.into())
                },
                no_value: reason,
                implausible: None,
                unavailable: None,
                dropped: 0,
                covered_s: None,
                samples: samples
                    .into_iter()
                    .map(|(t, v)| (t, serde_json::Number::from_f64(v)))
                    .collect(),
                counted: None,
                scaling: None,
                per_core: None,
            })
    }

    fn record() -> impl Strategy<Value = TraceRecord> {
        (any::<u64>(), any::<String>(), any::<String>()).prop_map(|(timestamp_ns, module, file)| {
            TraceRecord {
                timestamp_ns,
                seq: 0,
                module,
                file,
                line: 1,
                pid: 1,
                bytes: 0,
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any document, however odd its times, values and strings (a window whose ends are swapped, values
        /// near f64::MAX), makes a whole page whose only tags are the report's own.
        #[test]
        fn any_capture_makes_a_whole_page_of_its_own_tags(
            counters in proptest::collection::vec(counter(), 0..4),
            records in proptest::collection::vec(record(), 0..4),
            window in proptest::option::of((any::<u64>(), any::<u64>())),
            boottime in proptest::option::of(any::<u64>()),
        ) {
            let capture = Capture {
                schema_version: lizard_core::capture::SCHEMA_VERSION,
                duration_s: None,
                window_ns: window.map(|(a, b)| [a, b]),
                started_ns: None,
                boottime_zero_ns: boottime,
                wall_s: Some(1.0),
                warning: None,
                cores: lizard_core::capture::Cores::Combined,
                cores_note: None,
                run: None,
                sampling: None,
                counters,
                trace_records: records,
            };
            // The Perfetto trace of any document is written whole and decodes.
            #[cfg(feature = "perfetto")]
            {
                let mut trace = Vec::new();
                crate::perfetto::write(&capture, &mut trace).unwrap();
                let packets = <perfetto_writer::proto::Trace as prost::Message>::decode(trace.as_slice())
                    .unwrap()
                    .packet;
                prop_assert!(packets.len() >= 2);
            }
            let page = html(&capture);
            prop_assert!(page.trim_end().ends_with("</html>"));
            prop_assert!(!page.contains("NaN") && !page.contains("inf"));
            let tags: std::collections::BTreeSet<&str> = page
                .split('<')
                .skip(1)
                .map(|tag| tag.split([' ', '>', '/', '\n']).next().unwrap_or_default())
                .collect();
            let ours = [
                "", "!DOCTYPE", "html", "head", "meta", "title", "style", "script", "body", "header",
                "h1", "h2", "h3", "dl", "dt", "dd", "p", "output", "table", "thead", "tbody", "tr", "th",
                "td", "a", "section", "small", "span", "svg", "rect", "g", "line", "text", "polyline",
                "circle", "path", "footer",
            ];
            prop_assert!(tags.iter().all(|t| ours.contains(t)), "{tags:?}");
        }
    }
}
