use super::*;

const DOCUMENT: &str = r#"{
    "window_ns": [1000, 3000], "wall_s": 0.1, "warning": null,
    "counters": [
        {"id": 1, "counter": "Sim_ccnt", "units": "cycles", "class": "delta", "value": 400,
         "samples": [[1000, 100], [3000, 300]]},
        {"id": 2, "counter": "Sim_instructions", "units": "instructions", "class": "delta",
         "value": null, "no_value": "no samples", "samples": []}
    ],
    "trace_records": [
        {"timestamp_ns": 2000, "seq": 0, "module": "draw", "file": "app.c", "line": 7, "pid": 9, "bytes": 3}
    ]
}"#;

#[test]
fn a_document_without_a_version_reads_as_the_first() {
    let capture = Capture::from_json(DOCUMENT).unwrap();
    assert_eq!(capture.schema_version, 1);
    assert_eq!(capture.cores, Cores::Combined);
    assert_eq!(capture.window_ns, Some([1000, 3000]));
    assert_eq!(capture.counters[0].points(), [(1000, 100.0), (3000, 300.0)]);
    assert!(capture.counters[0].is_delta());
    assert_eq!(capture.counters[0].value_units().to_string(), "cycles");
    assert_eq!(capture.counters[0].info.multiplier, 1.0);
    let mut clock = capture.counters[0].clone();
    clock.info.units = Units::Megahertz;
    assert_eq!(
        clock.value_units(),
        Units::Hertz,
        "captures write MHz values in Hz"
    );
    assert_eq!(capture.counters[1].no_value.as_deref(), Some("no samples"));
    assert_eq!(capture.trace_records[0].module, "draw");
}

#[test]
fn a_written_document_reads_back_the_same() {
    let mut capture = Capture::from_json(DOCUMENT).unwrap();
    capture.schema_version = SCHEMA_VERSION;
    capture.cores = Cores::PerCore;
    capture.counters[0].counted = Some(Counted::PerCore);
    capture.counters[0].samples.push((4000, None));
    capture.counters[0].per_core = Some(vec![CorePart {
        core: 3,
        value: Some(Number::from_f64(2.5).unwrap()),
        no_value: None,
        samples: vec![(1000, Some(1.into()))],
    }]);
    capture.counters[1].unavailable = Some("not in the captured map".into());
    capture.counters[1].info.cpu_series = Some(CpuSeries {
        counter: "Sim".into(),
        cpu: 2,
    });
    let text = capture.to_json();
    assert!(text.contains("\"schema_version\": 1"), "{text}");
    assert!(text.contains("\"cores\": \"per-core\""), "{text}");
    assert!(text.contains("\"cpu_series\": {"), "{text}");
    assert!(
        text.contains("\"type\": \"\""),
        "the counter's fields sit in its object: {text}"
    );
    assert_eq!(Capture::from_json(&text).unwrap(), capture);
    // Optional keys are written only when they say something.
    let plain = Capture::from_json(DOCUMENT).unwrap().to_json();
    for key in [
        "\"counted\"",
        "\"per_core\"",
        "\"unavailable\"",
        "\"cpu_series\"",
    ] {
        assert!(!plain.contains(key), "{key} in {plain}");
    }
}

#[test]
fn a_sample_that_is_not_a_number_is_kept_but_not_plotted() {
    let text = DOCUMENT.replace("[3000, 300]", "[3000, null]");
    let capture = Capture::from_json(&text).unwrap();
    assert_eq!(capture.counters[0].samples.len(), 2);
    assert_eq!(capture.counters[0].points(), [(1000, 100.0)]);
}

#[test]
fn a_newer_document_is_refused_by_its_version() {
    let text = DOCUMENT.replacen('{', r#"{"schema_version": 2, "counters_v2": {},"#, 1);
    let error = Capture::from_json(&text).unwrap_err();
    assert!(
        matches!(error, DocumentError::NewerVersion { found: 2 }),
        "{error}"
    );
    assert!(error.to_string().contains("version 2"), "{error}");
}

#[test]
fn other_documents_are_refused_with_the_cause() {
    for text in [
        "",
        "not json",
        "{}",
        r#"{"counters": 5}"#,
        r#"{"schema_version": "1", "window_ns": null, "counters": []}"#,
        r#"{"window_ns": null, "counters": [{"id": 1}]}"#,
        r#"{"window_ns": null, "cores": "some", "counters": []}"#,
        r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": 5,
            "value": 1, "samples": []}]}"#,
        r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": "delta",
            "source": null, "value": 1, "samples": []}]}"#,
        r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": "delta",
            "value": 1, "samples": [[1, "x"]]}]}"#,
        r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": "delta",
            "value": 1, "samples": [[-1, 2]]}]}"#,
    ] {
        let error = Capture::from_json(text).unwrap_err();
        assert!(matches!(error, DocumentError::NotACapture(_)), "{text}");
        assert!(std::error::Error::source(&error).is_some());
    }
}

#[test]
fn the_facts_read_as_their_types_and_a_later_versions_words_are_kept() {
    let capture = Capture::from_json(DOCUMENT).unwrap();
    // Written before the keys were: no source, no type.
    assert_eq!(
        capture.counters[0].info.source,
        Source::Other(String::new())
    );
    assert_eq!(capture.counters[0].info.class, Class::Delta);
    let text = DOCUMENT.replacen(
        r#""class": "delta""#,
        r#""class": "rate", "source": "npu", "type": "int""#,
        1,
    );
    let later = Capture::from_json(&text).unwrap();
    let info = &later.counters[0].info;
    assert_eq!(info.class, Class::Other("rate".into()));
    assert!(!later.counters[0].is_delta());
    assert_eq!(
        (info.source.as_str(), info.source_label()),
        ("npu", "npu".to_owned())
    );
    assert_eq!(info.result_type, ValueType::Int);
    let written = later.to_json();
    assert!(written.contains(r#""class": "rate""#), "{written}");
    assert_eq!(Capture::from_json(&written).unwrap(), later);
}

#[test]
fn a_counter_without_value_or_reason_is_refused() {
    let text = DOCUMENT.replace(r#""no_value": "no samples", "#, "");
    let error = Capture::from_json(&text).unwrap_err();
    assert!(
        matches!(&error, DocumentError::MissingReason { id: 2, counter } if counter == "Sim_instructions"),
        "{error}"
    );
}

#[test]
fn the_gpus_sampling_is_its_own_account_in_the_document_and_its_lines() {
    let gpu = GpuSamplingDoc {
        pace: Pace::Periodic,
        interval_ns: 1_000_000,
        sampled_ns: 100_000_000,
        expected: 100,
        delivered: 95,
        folded: 2,
        missed: 1,
        missed_reason: Some("no dump came within 20.000 ms".into()),
        not_counting: 2,
        not_counting_reason: Some("not yet".into()),
        largest_gap_ns: 3_000_000,
        ..GpuSamplingDoc::default()
    };
    assert_eq!(
        gpu.summary(),
        "GPU sampling every 1 ms, dumped by the driver itself: 95 of 100 periods delivered, 2 folded, \
         1 missed (no dump came within 20.000 ms), 2 first dump(s) not counting yet, left out (not yet), \
         largest gap 3.000 ms"
    );
    assert!(gpu.degraded());
    let manual = GpuSamplingDoc {
        pace: Pace::Manual,
        manual_reason: Some("the driver does not dump by itself here (EINVAL)".into()),
        interval_ns: 1_000_000,
        ..GpuSamplingDoc::default()
    };
    assert!(manual
        .summary()
        .starts_with("GPU sampling every 1 ms, dumped on request (the driver does not dump"));
    assert!(!manual.degraded());
    // With CPU counters: two lines; the GPU alone: its line once.
    let mut local = LocalSampling {
        interval_ns: 1_000_000,
        method: Method::Thread,
        gpu: Some(gpu.clone()),
        ..LocalSampling::default()
    };
    let lines = local.summary_lines();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("local sampling every 1 ms by a thread"));
    assert_eq!(lines[1], gpu.summary());
    assert!(local.degraded(), "the GPU's missed period");
    local.method = Method::Gpu;
    assert_eq!(local.summary_lines(), vec![gpu.summary()]);
    assert_eq!(local.summary(), gpu.summary());
    // The JSON document keeps it; documents without it read as before.
    let json = serde_json::to_string(&local).unwrap();
    let back: LocalSampling = serde_json::from_str(&json).unwrap();
    assert_eq!(back, local);
    let old: LocalSampling = serde_json::from_str(
        r#"{"interval_ns": 1, "sampled_ns": 2, "expected": 2, "delivered": 2, "missed": 0, "largest_gap_ns": 1}"#,
    )
    .unwrap();
    assert_eq!(old.gpu, None);
}
