//! The entry point on streams and buffers written here with the encoder and the formatter: each way of
//! deciding the framing, and each input that cannot make a report refused with its own error.

use super::*;
use crate::formatter::format_frames;
use crate::keystone::{Device, HardwareMasters};
use crate::report::ReportEvent;
use crate::tbr::TbrError;
use crate::test_streams::put_msg;
use core::convert::Infallible;
use std::borrow::ToOwned;
use std::string::{String, ToString};
use std::vec;

/// `stream` in TWP / CoreSight frames of trace ID `id`.
fn framed(id: u8, stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    format_frames(id, stream, &mut out).unwrap();
    out
}

/// The messages' texts a prepared report gives.
fn texts<R: Read>(report: PreparedReport<'_, R>) -> Result<Vec<String>, BufferError<Infallible>> {
    let mut texts = Vec::new();
    let mut sink = |event: &ReportEvent<'_>| -> Result<(), Infallible> {
        if let ReportEvent::Message { message, .. } = event {
            texts.push(message.text.to_owned());
        }
        Ok(())
    };
    report.run(&mut sink)?;
    Ok(texts)
}

/// The inputs of a report on the stream `bytes`.
fn stream<'a>(bytes: &'a [u8], framing: FramingChoice<'a>) -> ReportInputs<'a, &'a [u8]> {
    ReportInputs::new(TraceInput::Stream(bytes), framing)
}

#[test]
fn the_first_bytes_say_bare_or_which_frames() {
    let bare = put_msg(b"hello");
    let report = stream(&bare, FramingChoice::Sniff).prepare().unwrap();
    assert_eq!(report.setup.trace_id(), None);
    assert!(matches!(report.setup.framing_source(), FramingSource::Census(c) if c.frames() > 0));
    assert_eq!(texts(report).unwrap(), ["hello"]);

    let one = framed(0x20, &bare);
    let report = stream(&one, FramingChoice::Sniff).prepare().unwrap();
    assert_eq!(report.setup.trace_id(), Some(0x20));
    assert_eq!(texts(report).unwrap(), ["hello"]);

    // Several sources with KeyStone II's STM among them: the STM's.
    let mut several = framed(0x10, &[1; 64]);
    several.extend(framed(STM_TRACE_ID, &bare));
    let report = stream(&several, FramingChoice::Sniff).prepare().unwrap();
    assert_eq!(report.setup.trace_id(), Some(STM_TRACE_ID));
    assert_eq!(texts(report).unwrap(), ["hello"]);

    // Several without it: which one must be said.
    let mut others = framed(0x10, &[1; 64]);
    others.extend(framed(0x20, &bare));
    let error = stream(&others, FramingChoice::Sniff).prepare().unwrap_err();
    assert!(matches!(&error, SetupError::SeveralTraceIds { census } if census.only_id().is_none()));
    assert!(error.to_string().contains("0x10 (64 bytes)"), "{error}");
    let report = stream(&others, FramingChoice::TraceId(0x20))
        .prepare()
        .unwrap();
    assert_eq!(report.setup.framing_source(), &FramingSource::Given);
    assert_eq!(texts(report).unwrap(), ["hello"]);
}

#[test]
fn a_dcm_says_frames_or_not_and_the_dump_starts_anywhere() {
    let bare = put_msg(b"hello");
    let frames = Dcm::stpv2(true).to_string();
    let one = framed(STM_TRACE_ID, &bare);
    let inputs = stream(
        &one,
        FramingChoice::Dcm {
            text: &frames,
            trace_id: None,
        },
    );
    let report = inputs.prepare().unwrap();
    assert_eq!(report.setup.trace_id(), Some(STM_TRACE_ID));
    assert_eq!(report.setup.framing_source(), &FramingSource::Dcm);
    assert!(report.setup.config().starts_mid_stream);
    assert_eq!(texts(report).unwrap(), ["hello"]);

    let other = framed(0x21, &bare);
    let inputs = stream(
        &other,
        FramingChoice::Dcm {
            text: &frames,
            trace_id: Some(0x21),
        },
    );
    assert_eq!(texts(inputs.prepare().unwrap()).unwrap(), ["hello"]);

    let no_frames = Dcm::stpv2(false).to_string();
    let inputs = stream(
        &bare,
        FramingChoice::Dcm {
            text: &no_frames,
            trace_id: None,
        },
    );
    assert_eq!(inputs.prepare().unwrap().setup.trace_id(), None);
}

#[test]
fn a_bad_dcm_is_a_dcm_error() {
    let bare = put_msg(b"hello");
    let missing = Dcm::stpv2(true).to_string().replace("TWP_Protocol=1\n", "");
    let not_numbers = "STM_data_flip=zero\n";
    for text in [&missing[..], not_numbers] {
        let inputs = stream(
            &bare,
            FramingChoice::Dcm {
                text,
                trace_id: None,
            },
        );
        let error = inputs.prepare().unwrap_err();
        assert!(matches!(error, SetupError::Dcm(_)), "{error:?}");
    }
}

#[test]
fn a_wrapped_buffer_is_put_in_order_and_starts_mid_stream() {
    let bare = put_msg(b"hello");
    let words = u32::try_from(bare.len() / 4).unwrap();
    // Rotated by two words: the write pointer is where its oldest word is.
    let mut buffer = bare[8..].to_vec();
    buffer.extend(&bare[..8]);
    let wrap = Wrap::Wrapped {
        write_pointer: words - 2,
    };
    let inputs = ReportInputs::<&[u8]>::new(
        TraceInput::Buffer {
            bytes: &buffer,
            wrap,
        },
        FramingChoice::Bare,
    );
    let report = inputs.prepare().unwrap();
    assert!(report.setup.config().starts_mid_stream);
    assert_eq!(texts(report).unwrap(), ["hello"]);

    let outside = ReportInputs::<&[u8]>::new(
        TraceInput::Buffer {
            bytes: &buffer,
            wrap: Wrap::Wrapped {
                write_pointer: words + 1,
            },
        },
        FramingChoice::Bare,
    );
    let error = texts(outside.prepare().unwrap()).unwrap_err();
    assert!(matches!(
        error,
        BufferError::Order(TbrError::PointerOutside { .. })
    ));
}

#[test]
fn what_cannot_make_a_report_is_refused_before_the_trace_is_read() {
    let bare = put_msg(b"hello");
    let dcm = Dcm::stpv2(true).to_string();
    for id in [0, 0x7f, 0x80] {
        let error = stream(&bare, FramingChoice::TraceId(id))
            .prepare()
            .unwrap_err();
        assert!(matches!(error, SetupError::BadTraceId { id: bad } if bad == id));
        let inputs = stream(
            &bare,
            FramingChoice::Dcm {
                text: &dcm,
                trace_id: Some(id),
            },
        );
        assert!(matches!(
            inputs.prepare().unwrap_err(),
            SetupError::BadTraceId { .. }
        ));
    }

    let mut inputs = stream(&bare, FramingChoice::Bare);
    inputs.masters.hardware = HardwareMasters {
        first: 0x90,
        last: 0x80,
    };
    assert!(matches!(
        inputs.prepare().unwrap_err(),
        SetupError::HardwareMasters {
            first: 0x90,
            last: 0x80
        }
    ));

    let inputs = ReportInputs::<&[u8]>::new(
        TraceInput::Buffer {
            bytes: &bare,
            wrap: Wrap::NotWrapped { write_pointer: 1 },
        },
        FramingChoice::Dcm {
            text: &dcm,
            trace_id: None,
        },
    );
    assert!(matches!(
        inputs.prepare().unwrap_err(),
        SetupError::DcmOfABuffer
    ));

    let mut inputs = stream(&bare, FramingChoice::Bare);
    inputs.window = Some(1_000);
    assert!(matches!(
        inputs.prepare().unwrap_err(),
        SetupError::WindowWithoutLayout
    ));

    let mut inputs = stream(&bare, FramingChoice::Bare);
    inputs.cptracer_layout = Some("bytes 15:0 bytes\n");
    assert!(matches!(
        inputs.prepare().unwrap_err(),
        SetupError::Layout(_)
    ));

    let mut inputs = stream(&bare, FramingChoice::Bare);
    inputs.dictionary = Some("value 5 0x1 ONE\nvalue 5 1 AGAIN\n");
    let error = inputs.prepare().unwrap_err();
    assert!(matches!(error, SetupError::Dictionary(_)), "{error:?}");
}

#[cfg(feature = "elf")]
#[test]
fn an_image_that_is_not_one_is_named_by_its_position() {
    let bare = put_msg(b"hello");
    let mut inputs = stream(&bare, FramingChoice::Bare);
    inputs.elf = vec![
        (None, &b"\x7fELF but no more"[..]),
        (Some(3), &b"#!/bin/sh\n"[..]),
    ];
    let error = inputs.prepare().unwrap_err();
    assert!(
        matches!(error, SetupError::Elf { index: 0, .. }),
        "{error:?}"
    );
}

#[test]
fn a_stream_that_cannot_be_read_is_a_read_error() {
    #[derive(Debug)]
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("broken"))
        }
    }
    let inputs = ReportInputs::new(TraceInput::<Broken>::Stream(Broken), FramingChoice::Sniff);
    assert!(matches!(inputs.prepare().unwrap_err(), SetupError::Read(_)));
}

#[test]
fn a_stream_with_nothing_is_given_up_on() {
    let zeros = vec![0u8; 1 << 20];
    let mut inputs = stream(&zeros, FramingChoice::Bare);
    inputs.give_up_after = Some(256 << 10);
    let error = texts(inputs.prepare().unwrap()).unwrap_err();
    assert!(matches!(error, BufferError::NothingFound { bytes } if bytes == 256 << 10));
    // Without a limit the whole stream is read, and its statistics say what was there.
    let mut inputs = stream(&zeros, FramingChoice::Bare);
    inputs.give_up_after = None;
    assert_eq!(
        texts(inputs.prepare().unwrap()).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn the_masters_name_the_images_and_the_dictionary() {
    let k2h = Masters::for_device(Device::K2h);
    assert_eq!(
        ElfArg::parse("0x8c=cpt.out", &k2h),
        ElfArg {
            master: Some(0x8c),
            path: "cpt.out"
        }
    );
    // DSP8 is no K2H core: a path.
    assert_eq!(
        ElfArg::parse("dsp8=app.out", &k2h),
        ElfArg {
            master: None,
            path: "dsp8=app.out"
        }
    );
    let bare = put_msg(b"hello");
    let mut inputs = stream(&bare, FramingChoice::Bare);
    inputs.masters = k2h;
    inputs.dictionary = Some("channel DSP2:5 log\n");
    let report = inputs.prepare().unwrap();
    assert_eq!(report.setup.dictionary().channel_name(2, 5), Some("log"));
    assert_eq!(report.setup.config().masters, k2h);
}
