//! [`Session`]: the `<session …>` document a client delivers before APC_START (read and write).
//!
//! [`Session::builder`] starts from the values Lizard sends, so `Session::builder().build().to_xml()` is Lizard's
//! 362-byte session document byte for byte; every setter changes one attribute.

use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::{self, Element};
use crate::write::{push_attr, DECLARATION};
use crate::Attributes;

macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($(#[$vdoc:meta])* $variant:ident = $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The attribute text.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }

            /// The value written as `text`, if any.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some(Self::$variant),)*
                    _ => None,
                }
            }

            const EXPECTED: &'static str = $what;
        }
    };
}

word_enum!(
    /// `buffer_mode`: how capture data is buffered. Every mode but `streaming` is one-shot.
    BufferMode, "streaming, small, normal or large", {
        /// `streaming`: live, 1 MB.
        Streaming = "streaming",
        /// `small`: 16 MB.
        Small = "small",
        /// `normal`: 64 MB.
        Normal = "normal",
        /// `large`: 256 MB.
        Large = "large",
    }
);

word_enum!(
    /// `sample_rate`: how often gatord samples.
    SampleRate, "high, normal, low or none", {
        /// `high`: 10007 Hz.
        High = "high",
        /// `normal`: 1009 Hz (GPU 2003 Hz).
        Normal = "normal",
        /// `low`: 101 Hz.
        Low = "low",
        /// `none`: no periodic sampling.
        None = "none",
    }
);

word_enum!(
    /// `gpu_timeline`.
    GpuTimeline, "auto, yes or no", {
        /// `auto` (gatord's default).
        Auto = "auto",
        /// `yes`.
        Yes = "yes",
        /// `no`.
        No = "no",
    }
);

word_enum!(
    /// `metric_sampling_mode`.
    MetricSamplingMode, "auto, ebs or strobing", {
        /// `auto` (gatord's default).
        Auto = "auto",
        /// `ebs`: event-based sampling.
        Ebs = "ebs",
        /// `strobing`.
        Strobing = "strobing",
    }
);

/// `<channel id resistance power/>` of an energy capture.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnergyChannel {
    /// `id`.
    pub id: u32,
    /// `resistance` (milliohms).
    pub resistance: Option<u32>,
    /// `power`.
    pub power: Option<bool>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<energy_capture version type>` (sent by Streamline and Lizard; gatord ignores it).
///
/// Only `<channel>` children are read; gatord ignores the whole element, so nothing else inside it is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnergyCapture {
    /// `version`.
    pub version: Option<u32>,
    /// `type` (`none`, ...).
    pub kind: Option<String>,
    /// The `<channel>` children.
    pub channels: Vec<EnergyChannel>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// The `<session>` document.
///
/// Attributes are written in the order of the fields below (Lizard's order first), then [`Session::extra`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Session {
    /// `call_stack_unwinding`.
    pub call_stack_unwinding: Option<bool>,
    /// `parse_debug_info` (ignored by gatord).
    pub parse_debug_info: Option<bool>,
    /// `version`: 1 or 2; gatord refuses anything else.
    pub version: u32,
    /// `high_resolution` (ignored by gatord).
    pub high_resolution: Option<bool>,
    /// `buffer_mode`; required by gatord.
    pub buffer_mode: Option<BufferMode>,
    /// `sample_rate`; required by gatord unless it was started with `-r`.
    pub sample_rate: Option<SampleRate>,
    /// `duration` in seconds; 0 means unlimited.
    pub duration: Option<u32>,
    /// `target_address` (ignored by gatord).
    pub target_address: Option<String>,
    /// `live_rate` in milliseconds: the flush period of live captures.
    pub live_rate: Option<u32>,
    /// `stop_gator`.
    pub stop_gator: Option<bool>,
    /// `use_efficient_ftrace`.
    pub use_efficient_ftrace: Option<bool>,
    /// `capture_working_dir`.
    pub capture_working_dir: Option<String>,
    /// `capture_command` (gatord needs `-a` to run it).
    pub capture_command: Option<String>,
    /// `capture_user`.
    pub capture_user: Option<String>,
    /// `exclude_kernel_events`.
    pub exclude_kernel_events: Option<bool>,
    /// `off_cpu_profiling`.
    pub off_cpu_profiling: Option<bool>,
    /// `gpu_timeline`.
    pub gpu_timeline: Option<GpuTimeline>,
    /// `metric_sampling_mode`.
    pub metric_sampling_mode: Option<MetricSamplingMode>,
    /// `resolution_mode` (ignored by gatord).
    pub resolution_mode: Option<String>,
    /// Attributes not modelled above (written after the modelled ones).
    pub extra: Attributes,
    /// `<image path/>` children: files copied into a local capture.
    pub images: Vec<String>,
    /// `<energy_capture>`.
    pub energy_capture: Option<EnergyCapture>,
    /// Other child elements, kept verbatim when reading; not written.
    pub other: Vec<RawElement>,
}

const KNOWN: &[&str] = &[
    "call_stack_unwinding",
    "parse_debug_info",
    "version",
    "high_resolution",
    "buffer_mode",
    "sample_rate",
    "duration",
    "target_address",
    "live_rate",
    "stop_gator",
    "use_efficient_ftrace",
    "capture_working_dir",
    "capture_command",
    "capture_user",
    "exclude_kernel_events",
    "off_cpu_profiling",
    "gpu_timeline",
    "metric_sampling_mode",
    "resolution_mode",
];

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

impl Session {
    /// A builder holding Lizard's session values (see [`SessionBuilder`]).
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// The document text: declaration, newline, the `<session>` element, newline.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(384);
        out.push_str(DECLARATION);
        out.push_str("\n<session");
        let flag = |out: &mut String, name: &str, v: Option<bool>| {
            if let Some(b) = v {
                push_attr(out, name, yes_no(b));
            }
        };
        flag(&mut out, "call_stack_unwinding", self.call_stack_unwinding);
        flag(&mut out, "parse_debug_info", self.parse_debug_info);
        push_attr(&mut out, "version", &self.version.to_string());
        flag(&mut out, "high_resolution", self.high_resolution);
        if let Some(m) = self.buffer_mode {
            push_attr(&mut out, "buffer_mode", m.as_str());
        }
        if let Some(r) = self.sample_rate {
            push_attr(&mut out, "sample_rate", r.as_str());
        }
        if let Some(d) = self.duration {
            push_attr(&mut out, "duration", &d.to_string());
        }
        if let Some(a) = &self.target_address {
            push_attr(&mut out, "target_address", a);
        }
        if let Some(r) = self.live_rate {
            push_attr(&mut out, "live_rate", &r.to_string());
        }
        flag(&mut out, "stop_gator", self.stop_gator);
        flag(&mut out, "use_efficient_ftrace", self.use_efficient_ftrace);
        for (name, value) in [
            ("capture_working_dir", &self.capture_working_dir),
            ("capture_command", &self.capture_command),
            ("capture_user", &self.capture_user),
        ] {
            if let Some(v) = value {
                push_attr(&mut out, name, v);
            }
        }
        flag(
            &mut out,
            "exclude_kernel_events",
            self.exclude_kernel_events,
        );
        flag(&mut out, "off_cpu_profiling", self.off_cpu_profiling);
        if let Some(g) = self.gpu_timeline {
            push_attr(&mut out, "gpu_timeline", g.as_str());
        }
        if let Some(m) = self.metric_sampling_mode {
            push_attr(&mut out, "metric_sampling_mode", m.as_str());
        }
        if let Some(r) = &self.resolution_mode {
            push_attr(&mut out, "resolution_mode", r);
        }
        for (k, v) in &self.extra {
            push_attr(&mut out, k, v);
        }
        if self.images.is_empty() && self.energy_capture.is_none() {
            out.push_str("/>\n");
            return out;
        }
        out.push_str(">\n");
        for path in &self.images {
            out.push_str("<image");
            push_attr(&mut out, "path", path);
            out.push_str("/>\n");
        }
        if let Some(e) = &self.energy_capture {
            out.push_str("<energy_capture");
            if let Some(v) = e.version {
                push_attr(&mut out, "version", &v.to_string());
            }
            if let Some(k) = &e.kind {
                push_attr(&mut out, "type", k);
            }
            for (k, v) in &e.extra {
                push_attr(&mut out, k, v);
            }
            out.push_str(">\n");
            for c in &e.channels {
                out.push_str("<channel");
                push_attr(&mut out, "id", &c.id.to_string());
                if let Some(r) = c.resistance {
                    push_attr(&mut out, "resistance", &r.to_string());
                }
                if let Some(p) = c.power {
                    push_attr(&mut out, "power", yes_no(p));
                }
                for (k, v) in &c.extra {
                    push_attr(&mut out, k, v);
                }
                out.push_str("/>\n");
            }
            out.push_str("</energy_capture>");
        }
        out.push_str("</session>\n");
        out
    }

    /// The document bytes, ready to be framed as a COMMAND_DELIVER_XML payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_xml().into_bytes()
    }

    /// Reads a session document; `version` is required, enumerated attributes must hold a known word.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        let doc = reader::parse_document(text, 0)?;
        let root = reader::root(&doc, "session", 0)?;
        let version = crate::counters::required_int(&root, "version")?;
        let mut s = Session {
            call_stack_unwinding: root.boolean("call_stack_unwinding")?,
            parse_debug_info: root.boolean("parse_debug_info")?,
            version,
            high_resolution: root.boolean("high_resolution")?,
            buffer_mode: word(
                &root,
                "buffer_mode",
                BufferMode::parse,
                BufferMode::EXPECTED,
            )?,
            sample_rate: word(
                &root,
                "sample_rate",
                SampleRate::parse,
                SampleRate::EXPECTED,
            )?,
            duration: root.int("duration")?,
            target_address: root.string("target_address"),
            live_rate: root.int("live_rate")?,
            stop_gator: root.boolean("stop_gator")?,
            use_efficient_ftrace: root.boolean("use_efficient_ftrace")?,
            capture_working_dir: root.string("capture_working_dir"),
            capture_command: root.string("capture_command"),
            capture_user: root.string("capture_user"),
            exclude_kernel_events: root.boolean("exclude_kernel_events")?,
            off_cpu_profiling: root.boolean("off_cpu_profiling")?,
            gpu_timeline: word(
                &root,
                "gpu_timeline",
                GpuTimeline::parse,
                GpuTimeline::EXPECTED,
            )?,
            metric_sampling_mode: word(
                &root,
                "metric_sampling_mode",
                MetricSamplingMode::parse,
                MetricSamplingMode::EXPECTED,
            )?,
            resolution_mode: root.string("resolution_mode"),
            extra: root.extra(KNOWN),
            ..Session::default()
        };
        for child in root.children() {
            match child.tag_name().name() {
                "image" => s
                    .images
                    .push(root.child(child, "image").required("path")?.to_owned()),
                "energy_capture" => {
                    s.energy_capture = Some(read_energy(root.child(child, "energy_capture"))?)
                }
                _ => s.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(s)
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }
}

fn word<T>(
    el: &Element<'_, '_>,
    attribute: &'static str,
    parse: fn(&str) -> Option<T>,
    expected: &'static str,
) -> Result<Option<T>, XmlError> {
    el.str(attribute)
        .map(|v| parse(v).ok_or_else(|| el.value_error(attribute, v, expected)))
        .transpose()
}

fn read_energy(el: Element<'_, '_>) -> Result<EnergyCapture, XmlError> {
    let mut e = EnergyCapture {
        version: el.int("version")?,
        kind: el.string("type"),
        channels: Vec::new(),
        extra: el.extra(&["version", "type"]),
    };
    for child in el.children().filter(|n| n.tag_name().name() == "channel") {
        let c = el.child(child, "channel");
        e.channels.push(EnergyChannel {
            id: crate::counters::required_int(&c, "id")?,
            resistance: c.int("resistance")?,
            power: c.boolean("power")?,
            extra: c.extra(&["id", "resistance", "power"]),
        });
    }
    Ok(e)
}

/// Builds a [`Session`], starting from the values Lizard sends:
/// no call-stack unwinding, no debug info, version 1, no high resolution, streaming buffer, normal sample rate
/// (1009 Hz), unlimited duration, target address `localhost`, 100 ms live rate, do not stop gatord, and an
/// energy capture of type `none` with channel 0 (resistance 20, power yes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionBuilder {
    session: Session,
}

impl Default for SessionBuilder {
    fn default() -> Self {
        Self {
            session: Session {
                call_stack_unwinding: Some(false),
                parse_debug_info: Some(false),
                version: 1,
                high_resolution: Some(false),
                buffer_mode: Some(BufferMode::Streaming),
                sample_rate: Some(SampleRate::Normal),
                duration: Some(0),
                target_address: Some("localhost".to_owned()),
                live_rate: Some(100),
                stop_gator: Some(false),
                energy_capture: Some(EnergyCapture {
                    version: Some(1),
                    kind: Some("none".to_owned()),
                    channels: vec![EnergyChannel {
                        id: 0,
                        resistance: Some(20),
                        power: Some(true),
                        extra: Attributes::new(),
                    }],
                    extra: Attributes::new(),
                }),
                ..Session::default()
            },
        }
    }
}

impl SessionBuilder {
    /// Sets `sample_rate`.
    pub fn sample_rate(mut self, rate: SampleRate) -> Self {
        self.session.sample_rate = Some(rate);
        self
    }

    /// Sets `buffer_mode`.
    pub fn buffer_mode(mut self, mode: BufferMode) -> Self {
        self.session.buffer_mode = Some(mode);
        self
    }

    /// Sets `duration` in seconds (0: unlimited).
    pub fn duration(mut self, seconds: u32) -> Self {
        self.session.duration = Some(seconds);
        self
    }

    /// Sets `live_rate` in milliseconds.
    pub fn live_rate(mut self, milliseconds: u32) -> Self {
        self.session.live_rate = Some(milliseconds);
        self
    }

    /// Sets `call_stack_unwinding`.
    pub fn call_stack_unwinding(mut self, on: bool) -> Self {
        self.session.call_stack_unwinding = Some(on);
        self
    }

    /// Sets `version` (gatord accepts 1 or 2).
    pub fn version(mut self, version: u32) -> Self {
        self.session.version = version;
        self
    }

    /// Sets `stop_gator`.
    pub fn stop_gator(mut self, on: bool) -> Self {
        self.session.stop_gator = Some(on);
        self
    }

    /// Sets `target_address`, or removes it with `None`.
    pub fn target_address(mut self, address: Option<String>) -> Self {
        self.session.target_address = address;
        self
    }

    /// Sets `capture_command` (run by gatord through `sh -c` when started with `-a`).
    pub fn capture_command(mut self, command: impl Into<String>) -> Self {
        self.session.capture_command = Some(command.into());
        self
    }

    /// Sets `capture_working_dir`.
    pub fn capture_working_dir(mut self, dir: impl Into<String>) -> Self {
        self.session.capture_working_dir = Some(dir.into());
        self
    }

    /// Sets `exclude_kernel_events`.
    pub fn exclude_kernel_events(mut self, on: bool) -> Self {
        self.session.exclude_kernel_events = Some(on);
        self
    }

    /// Sets `gpu_timeline`.
    pub fn gpu_timeline(mut self, mode: GpuTimeline) -> Self {
        self.session.gpu_timeline = Some(mode);
        self
    }

    /// Sets `metric_sampling_mode`.
    pub fn metric_sampling_mode(mut self, mode: MetricSamplingMode) -> Self {
        self.session.metric_sampling_mode = Some(mode);
        self
    }

    /// Adds an `<image path/>`.
    pub fn image(mut self, path: impl Into<String>) -> Self {
        self.session.images.push(path.into());
        self
    }

    /// Sets or removes the `<energy_capture>` element.
    pub fn energy_capture(mut self, capture: Option<EnergyCapture>) -> Self {
        self.session.energy_capture = capture;
        self
    }

    /// The session.
    pub fn build(self) -> Session {
        self.session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIZARD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<session call_stack_unwinding=\"no\" parse_debug_info=\"no\" version=\"1\" high_resolution=\"no\" buffer_mode=\"streaming\" sample_rate=\"normal\" duration=\"0\" target_address=\"localhost\" live_rate=\"100\" stop_gator=\"no\">\n<energy_capture version=\"1\" type=\"none\">\n<channel id=\"0\" resistance=\"20\" power=\"yes\"/>\n</energy_capture></session>\n";

    #[test]
    fn builder_defaults_are_lizards_362_bytes() {
        let xml = Session::builder().build().to_xml();
        assert_eq!(xml.len(), 362);
        assert_eq!(xml, LIZARD);
        assert_eq!(Session::parse(LIZARD).unwrap(), Session::builder().build());
    }

    #[test]
    fn setters_change_one_attribute_each() {
        let s = Session::builder()
            .sample_rate(SampleRate::Low)
            .buffer_mode(BufferMode::Large)
            .duration(5)
            .live_rate(10)
            .call_stack_unwinding(true)
            .version(2)
            .stop_gator(true)
            .target_address(None)
            .capture_command("sleep 1 && echo \"done\"")
            .capture_working_dir("/tmp")
            .exclude_kernel_events(true)
            .gpu_timeline(GpuTimeline::No)
            .metric_sampling_mode(MetricSamplingMode::Ebs)
            .image("/bin/a&b")
            .energy_capture(None)
            .build();
        let xml = s.to_xml();
        assert!(xml.contains(" sample_rate=\"low\""));
        assert!(xml.contains(" capture_command=\"sleep 1 &amp;&amp; echo &quot;done&quot;\""));
        assert!(!xml.contains("target_address"));
        assert!(xml.contains("<image path=\"/bin/a&amp;b\"/>"));
        assert_eq!(Session::parse(&xml).unwrap(), s);
    }

    #[test]
    fn a_session_without_children_is_an_empty_element() {
        let s = Session::builder().energy_capture(None).build();
        assert!(s.to_xml().ends_with("stop_gator=\"no\"/>\n"));
        assert_eq!(Session::parse(&s.to_xml()).unwrap(), s);
    }

    #[test]
    fn word_enums_round_trip() {
        for m in BufferMode::ALL {
            assert_eq!(BufferMode::parse(m.as_str()), Some(*m));
        }
        for r in SampleRate::ALL {
            assert_eq!(SampleRate::parse(r.as_str()), Some(*r));
        }
        for g in GpuTimeline::ALL {
            assert_eq!(GpuTimeline::parse(g.as_str()), Some(*g));
        }
        for m in MetricSamplingMode::ALL {
            assert_eq!(MetricSamplingMode::parse(m.as_str()), Some(*m));
        }
    }

    #[test]
    fn invalid_sessions_are_refused() {
        assert!(matches!(
            Session::parse("<session sample_rate=\"low\"/>"),
            Err(XmlError::MissingAttribute {
                attribute: "version",
                ..
            })
        ));
        assert!(matches!(
            Session::parse("<session version=\"1\" sample_rate=\"fast\"/>"),
            Err(XmlError::InvalidValue { ref attribute, expected: "high, normal, low or none", .. }) if attribute == "sample_rate"
        ));
        assert!(matches!(
            Session::parse("<session version=\"1\" buffer_mode=\"huge\"/>"),
            Err(XmlError::InvalidValue { .. })
        ));
        assert!(matches!(
            Session::parse("<session version=\"1\" duration=\"1s\"/>"),
            Err(XmlError::InvalidNumber { .. })
        ));
        assert!(matches!(
            Session::parse("<session version=\"1\"><image/></session>"),
            Err(XmlError::MissingAttribute {
                attribute: "path",
                ..
            })
        ));
        assert!(matches!(
            Session::parse(
                "<session version=\"1\"><energy_capture><channel/></energy_capture></session>"
            ),
            Err(XmlError::MissingAttribute {
                attribute: "id",
                ..
            })
        ));
    }
}
