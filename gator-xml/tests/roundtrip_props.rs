//! Property tests: configuration, session, request, counters and captured documents written by this crate read back to the same
//! model for arbitrary names and values (generated here, including XML special characters and non-ASCII text),
//! and the readers never panic on arbitrary text.

use gator_xml::{
    Attributes, AvailableCounter, BufferMode, Captured, CapturedCounter, CapturedProcess,
    CapturedSpe, Cluster, Configurations, CounterConfiguration, Counters, Cpu, CurrentConfig,
    EnergyCapture, EnergyChannel, EventClass, Events, GpuTimeline, MetricSamplingMode, Pmus,
    Request, RequestType, SampleRate, Session, SpeConfiguration,
};
use proptest::prelude::*;

/// Attribute text: any characters XML 1.0 allows, biased towards the ones that need escaping.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::char::range('a', 'z'),
            2 => prop::sample::select(vec!['&', '"', '\'', '<', '>', ' ', '\t', '\n', '\r', 'µ', '°', '÷', '“']),
            1 => any::<char>().prop_filter("XML 1.0 character", |c| {
                matches!(*c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
            }),
        ],
        0..24,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn extra() -> impl Strategy<Value = Attributes> {
    prop::collection::btree_map("x-[a-z]{1,6}", text(), 0..3)
}

fn counter() -> impl Strategy<Value = CounterConfiguration> {
    (
        text(),
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        any::<Option<u32>>(),
        extra(),
    )
        .prop_map(
            |(counter, event, count, cores, extra)| CounterConfiguration {
                counter,
                event,
                count,
                cores,
                extra,
            },
        )
}

fn spe() -> impl Strategy<Value = SpeConfiguration> {
    (
        text(),
        any::<Option<u64>>(),
        any::<[Option<bool>; 4]>(),
        any::<Option<u32>>(),
        extra(),
    )
        .prop_map(
            |(id, event_filter, flags, min_latency, extra)| SpeConfiguration {
                id,
                event_filter,
                load_filter: flags[0],
                store_filter: flags[1],
                branch_filter: flags[2],
                min_latency,
                inverse_event_filter: flags[3],
                extra,
            },
        )
}

fn configurations() -> impl Strategy<Value = Configurations> {
    (
        any::<Option<u32>>(),
        prop::option::of(text()),
        prop::collection::vec(counter(), 0..8),
        prop::collection::vec(spe(), 0..3),
        extra(),
    )
        .prop_map(|(revision, gpu_public_name, mut counters, spes, extra)| {
            // Counter names are unique in a valid document.
            let mut seen = std::collections::HashSet::new();
            counters.retain(|c| seen.insert(c.counter.clone()));
            Configurations {
                revision,
                gpu_public_name,
                counters,
                spes,
                other: Vec::new(),
                extra,
            }
        })
}

fn option_of<T: Copy + std::fmt::Debug + 'static>(
    all: &'static [T],
) -> impl Strategy<Value = Option<T>> {
    prop::option::of(prop::sample::select(all))
}

fn energy() -> impl Strategy<Value = Option<EnergyCapture>> {
    prop::option::of(
        (
            any::<Option<u32>>(),
            prop::option::of(text()),
            prop::collection::vec(
                (
                    any::<u32>(),
                    any::<Option<u32>>(),
                    any::<Option<bool>>(),
                    extra(),
                )
                    .prop_map(|(id, resistance, power, extra)| EnergyChannel {
                        id,
                        resistance,
                        power,
                        extra,
                    }),
                0..3,
            ),
            extra(),
        )
            .prop_map(|(version, kind, channels, extra)| EnergyCapture {
                version,
                kind,
                channels,
                extra,
            }),
    )
}

fn session() -> impl Strategy<Value = Session> {
    (
        (
            any::<[Option<bool>; 8]>(),
            any::<u32>(),
            option_of(BufferMode::ALL),
            option_of(SampleRate::ALL),
            any::<Option<u32>>(),
            any::<Option<u32>>(),
        ),
        (
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(text()),
            option_of(GpuTimeline::ALL),
            option_of(MetricSamplingMode::ALL),
        ),
        extra(),
        prop::collection::vec(text(), 0..3),
        energy(),
    )
        .prop_map(
            |(
                (flags, version, buffer_mode, sample_rate, duration, live_rate),
                strings,
                extra,
                images,
                energy_capture,
            )| {
                let (
                    target_address,
                    capture_working_dir,
                    capture_command,
                    capture_user,
                    resolution_mode,
                    gpu_timeline,
                    metric_sampling_mode,
                ) = strings;
                Session {
                    call_stack_unwinding: flags[0],
                    parse_debug_info: flags[1],
                    version,
                    high_resolution: flags[2],
                    buffer_mode,
                    sample_rate,
                    duration,
                    target_address,
                    live_rate,
                    stop_gator: flags[3],
                    use_efficient_ftrace: flags[4],
                    capture_working_dir,
                    capture_command,
                    capture_user,
                    exclude_kernel_events: flags[5],
                    off_cpu_profiling: flags[6],
                    gpu_timeline,
                    metric_sampling_mode,
                    resolution_mode,
                    extra,
                    images,
                    energy_capture,
                    other: Vec::new(),
                }
            },
        )
}

fn available_counters() -> impl Strategy<Value = Counters> {
    (
        any::<Option<bool>>(),
        prop::collection::vec((text(), extra()), 0..4),
        prop::collection::vec(text(), 0..2),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec((any::<u32>(), text()), 0..2),
        prop::collection::vec(any::<(u32, u32)>(), 0..3),
        extra(),
    )
        .prop_map(
            |(ebs, counters, spes, setup, other, clusters, cpus, extra)| Counters {
                supports_multiple_ebs: ebs,
                counters: counters
                    .into_iter()
                    .map(|(name, extra)| AvailableCounter { name, extra })
                    .collect(),
                spes,
                setup_warnings: setup,
                other_warnings: other,
                clusters: clusters
                    .into_iter()
                    .map(|(id, name)| Cluster { id, name })
                    .collect(),
                cpus: cpus
                    .into_iter()
                    .map(|(id, cluster)| Cpu { id, cluster })
                    .collect(),
                other: Vec::new(),
                extra,
            },
        )
}

fn captured_counter() -> impl Strategy<Value = CapturedCounter> {
    (
        (
            any::<u64>(),
            text(),
            any::<Option<u64>>(),
            any::<Option<u64>>(),
            any::<Option<u32>>(),
        ),
        (
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(prop::sample::select(vec![
                "constant", "delta", "absolute", "activity",
            ])),
            prop::option::of(text()),
            extra(),
        ),
    )
        .prop_map(
            |((key, counter, event, count, cores), (title, name, class, mode, extra))| {
                CapturedCounter {
                    key,
                    counter,
                    event,
                    count,
                    cores,
                    title,
                    name,
                    class: class.map(EventClass::parse),
                    mode,
                    extra,
                }
            },
        )
}

fn captured() -> impl Strategy<Value = Captured> {
    (
        (
            any::<Option<u32>>(),
            prop::option::of(text()),
            prop::option::of(text()),
            any::<Option<u32>>(),
        ),
        (
            any::<Option<u32>>(),
            prop::option::of(text()),
            any::<Option<u64>>(),
        ),
        prop::option::of((prop::option::of(text()), prop::option::of(text()), extra())),
        prop::option::of((
            any::<Option<u32>>(),
            prop::option::of(text()),
            any::<Option<u32>>(),
            any::<Option<bool>>(),
        )),
        prop::collection::vec(captured_counter(), 0..4),
        prop::collection::vec((any::<u64>(), text()), 0..2),
        extra(),
    )
        .prop_map(
            |(
                (version, backtrace, kind, protocol),
                (product, tag, created),
                process,
                target,
                counters,
                spes,
                extra,
            )| {
                Captured {
                    version,
                    backtrace_processing: backtrace,
                    kind,
                    protocol,
                    product,
                    product_tag: tag,
                    created,
                    process: process.map(|(process_name, package_name, extra)| CapturedProcess {
                        process_name,
                        package_name,
                        extra,
                        ..CapturedProcess::default()
                    }),
                    target: target.map(|(sample_rate, name, cpuid, supports_live)| {
                        gator_xml::Target {
                            sample_rate,
                            name,
                            cpuid,
                            supports_live,
                            ..gator_xml::Target::default()
                        }
                    }),
                    counters,
                    spes: spes
                        .into_iter()
                        .map(|(key, id)| CapturedSpe { key, id })
                        .collect(),
                    templates: None,
                    other: Vec::new(),
                    extra,
                }
            },
        )
}

proptest! {
    #[test]
    fn counters_round_trip(doc in available_counters()) {
        prop_assert_eq!(Counters::parse(&doc.to_xml()).unwrap(), doc);
    }

    #[test]
    fn captured_round_trips(doc in captured()) {
        prop_assert_eq!(Captured::parse(&doc.to_xml()).unwrap(), doc);
    }

    #[test]
    fn configurations_round_trip(doc in configurations()) {
        let xml = doc.to_xml();
        prop_assert_eq!(Configurations::parse(&xml).unwrap(), doc.clone());
        prop_assert_eq!(Configurations::from_bytes(&doc.to_bytes()).unwrap(), doc);
    }

    #[test]
    fn sessions_round_trip(s in session()) {
        prop_assert_eq!(Session::parse(&s.to_xml()).unwrap(), s.clone());
        prop_assert_eq!(Session::from_bytes(&s.to_bytes()).unwrap(), s);
    }

    #[test]
    fn requests_round_trip(kind in text()) {
        let request = Request::new(RequestType::parse(&kind));
        prop_assert_eq!(Request::parse(&request.to_xml()).unwrap(), request);
    }

    #[test]
    fn builder_changes_only_what_is_set(rate in prop::sample::select(SampleRate::ALL), seconds in any::<u32>(), command in text()) {
        let s = Session::builder().sample_rate(rate).duration(seconds).capture_command(command.clone()).build();
        let back = Session::parse(&s.to_xml()).unwrap();
        prop_assert_eq!(back.sample_rate, Some(rate));
        prop_assert_eq!(back.duration, Some(seconds));
        prop_assert_eq!(back.capture_command, Some(command));
        prop_assert_eq!(back.target_address.as_deref(), Some("localhost"));
    }

    #[test]
    fn readers_return_a_result_for_any_text(s in ".{0,200}") {
        let _ = Events::parse(&s);
        let _ = Captured::parse(&s);
        let _ = Counters::parse(&s);
        let _ = Configurations::parse(&s);
        let _ = CurrentConfig::parse(&s);
        let _ = Session::parse(&s);
        let _ = Request::parse(&s);
        let _ = Pmus::parse(&s);
    }

    #[test]
    fn readers_return_a_result_for_mutated_documents(pos in 0usize..400, byte in any::<u8>()) {
        let base = Session::builder().build().to_bytes();
        let mut bytes = base.clone();
        let at = pos % bytes.len();
        bytes[at] = byte;
        let _ = Session::from_bytes(&bytes);
        let _ = Events::from_bytes(&bytes);
        let _ = Request::from_bytes(&bytes);
    }
}
