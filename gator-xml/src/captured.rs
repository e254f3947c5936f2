//! [`Captured`]: the reply to `<request type="captured"/>` (also `captured.xml` in a local capture).
//!
//! It describes the target and maps each enabled counter to the integer key that BLOCK_COUNTER frames carry.
//! Keys are written as `0x` hexadecimal (`<counter key="0x5e" type="Linux_meminfo_memfree"/>`); they are
//! allocated per daemon process and must never be hard-coded.

use crate::counters::required_int;
use crate::error::XmlError;
use crate::event_class::EventClass;
use crate::events::{Events, Resolved};
use crate::raw::RawElement;
use crate::reader::{self, Element};
use crate::write::{push_attr, push_extra, push_int, push_opt, push_raw, push_yes_no, DECLARATION};
use crate::Attributes;

/// `<process …/>`: the process gatord waits for, when it does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapturedProcess {
    /// `process_name`.
    pub process_name: Option<String>,
    /// `package_name`.
    pub package_name: Option<String>,
    /// `activity_name`.
    pub activity_name: Option<String>,
    /// `activity_arguments`.
    pub activity_arguments: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<target …/>`: the machine being profiled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Target {
    /// `sample_rate` in Hz.
    pub sample_rate: Option<u32>,
    /// `sample_rate_gpu` in Hz.
    pub sample_rate_gpu: Option<u32>,
    /// `name`: the model (`unknown` on x86).
    pub name: Option<String>,
    /// `gpu_public_name`.
    pub gpu_public_name: Option<String>,
    /// `cores`: CPU count.
    pub cores: Option<u32>,
    /// `gpu_cores`.
    pub gpu_cores: Option<u32>,
    /// `gatord_src_md5sum`.
    pub gatord_src_md5sum: Option<String>,
    /// `gatord_build_id`.
    pub gatord_build_id: Option<String>,
    /// `cpuid`: `(implementer << 12) | part number` (hexadecimal); `0xfffff` means "other".
    pub cpuid: Option<u32>,
    /// `supports_live`.
    pub supports_live: Option<bool>,
    /// `local_capture`.
    pub local_capture: Option<bool>,
    /// `off_cpu_profiling`.
    pub off_cpu_profiling: Option<bool>,
    /// `os` (`linux`, `android`).
    pub os: Option<String>,
    /// `os_version`.
    pub os_version: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// A `<counter>` of the captured key map.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapturedCounter {
    /// `key`: the key BLOCK_COUNTER frames use for this counter.
    pub key: u64,
    /// The counter name: `type` for enabled counters, `counter` for constants.
    pub counter: String,
    /// `event`: the event code programmed into a slot.
    pub event: Option<u64>,
    /// `count`: the event-based-sampling period.
    pub count: Option<u64>,
    /// `cores`.
    pub cores: Option<u32>,
    /// `title` (constants).
    pub title: Option<String>,
    /// `name` (constants).
    pub name: Option<String>,
    /// `class` (constants: `constant`).
    pub class: Option<EventClass>,
    /// `mode` (constants: `per-core` or `system-wide`).
    pub mode: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<spe key id/>` of the key map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedSpe {
    /// `key`.
    pub key: u64,
    /// `id`.
    pub id: String,
}

/// The `<captured>` document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Captured {
    /// `version`.
    pub version: Option<u32>,
    /// `backtrace_processing` (`perf`, `none`).
    pub backtrace_processing: Option<String>,
    /// `type` (`Perf`).
    pub kind: Option<String>,
    /// `protocol`: the protocol version (950 for gatord 9.5 – 9.7).
    pub protocol: Option<u32>,
    /// `product`: the product version (972 for gatord 9.7.2).
    pub product: Option<u32>,
    /// `product_tag`.
    pub product_tag: Option<String>,
    /// `created`: unix time, in files written by a local capture.
    pub created: Option<u64>,
    /// `<process>`.
    pub process: Option<CapturedProcess>,
    /// `<target>`.
    pub target: Option<Target>,
    /// The `<counters>` key map: `<counter>` children in document order.
    pub counters: Vec<CapturedCounter>,
    /// `<spe>` children of `<counters>`.
    pub spes: Vec<CapturedSpe>,
    /// `<templates>`, kept verbatim.
    pub templates: Option<RawElement>,
    /// Other elements, kept verbatim.
    pub other: Vec<RawElement>,
    /// Attributes of the root not modelled above.
    pub extra: Attributes,
}

impl Captured {
    /// Reads a captured document.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        let doc = reader::parse_document(text, 0)?;
        let root = reader::root(&doc, "captured", 0)?;
        let mut out = Captured {
            version: root.int("version")?,
            backtrace_processing: root.string("backtrace_processing"),
            kind: root.string("type"),
            protocol: root.int("protocol")?,
            product: root.int("product")?,
            product_tag: root.string("product_tag"),
            created: root.int("created")?,
            extra: root.extra(&[
                "version",
                "backtrace_processing",
                "type",
                "protocol",
                "product",
                "product_tag",
                "created",
            ]),
            ..Captured::default()
        };
        for child in root.children() {
            match child.tag_name().name() {
                "process" => out.process = Some(read_process(root.child(child, "process"))),
                "target" => out.target = Some(read_target(root.child(child, "target"))?),
                "counters" => {
                    let counters = root.child(child, "counters");
                    for c in counters.children() {
                        match c.tag_name().name() {
                            "counter" => out
                                .counters
                                .push(read_counter(counters.child(c, "counter"))?),
                            "spe" => {
                                let s = counters.child(c, "spe");
                                out.spes.push(CapturedSpe {
                                    key: required_int(&s, "key")?,
                                    id: s.required("id")?.to_owned(),
                                });
                            }
                            _ => out.other.push(counters.child(c, "element").raw()?),
                        }
                    }
                }
                "templates" => out.templates = Some(root.child(child, "templates").raw()?),
                _ => out.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(out)
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }

    /// The document text: the root's attributes, `<process>`, `<target>`, the `<counters>` key map (a
    /// constant, class `constant`, named by `counter`, every other counter by `type`; keys in `0x`
    /// hexadecimal, as gatord writes them), `<templates>` and the kept elements. Every value is escaped;
    /// [`Captured::parse`] reads it back equal.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(256 + 64 * self.counters.len());
        out.push_str(DECLARATION);
        out.push_str("\n<captured");
        push_int(&mut out, "version", self.version);
        push_opt(
            &mut out,
            "backtrace_processing",
            self.backtrace_processing.as_deref(),
        );
        push_opt(&mut out, "type", self.kind.as_deref());
        push_int(&mut out, "protocol", self.protocol);
        push_int(&mut out, "product", self.product);
        push_opt(&mut out, "product_tag", self.product_tag.as_deref());
        push_int(&mut out, "created", self.created);
        push_extra(&mut out, &self.extra);
        out.push_str(">\n");
        if let Some(p) = &self.process {
            out.push_str("  <process");
            push_opt(&mut out, "process_name", p.process_name.as_deref());
            push_opt(&mut out, "package_name", p.package_name.as_deref());
            push_opt(&mut out, "activity_name", p.activity_name.as_deref());
            push_opt(
                &mut out,
                "activity_arguments",
                p.activity_arguments.as_deref(),
            );
            push_extra(&mut out, &p.extra);
            out.push_str(" />\n");
        }
        if let Some(t) = &self.target {
            write_target(&mut out, t);
        }
        out.push_str("  <counters>\n");
        for c in &self.counters {
            write_counter(&mut out, c);
        }
        for s in &self.spes {
            out.push_str("    <spe");
            push_attr(&mut out, "key", &format!("0x{:x}", s.key));
            push_attr(&mut out, "id", &s.id);
            out.push_str(" />\n");
        }
        out.push_str("  </counters>\n");
        for element in self.templates.iter().chain(&self.other) {
            out.push_str("  ");
            push_raw(&mut out, element);
            out.push('\n');
        }
        out.push_str("</captured>\n");
        out
    }

    /// The counter bound to `key` (first match in document order).
    pub fn counter_by_key(&self, key: u64) -> Option<&CapturedCounter> {
        self.counters.iter().find(|c| c.key == key)
    }

    /// The counter named `counter`.
    pub fn counter_by_name(&self, counter: &str) -> Option<&CapturedCounter> {
        self.counters.iter().find(|c| c.counter == counter)
    }

    /// The event description of the counter bound to `key`, looked up in `events`.
    pub fn describe<'e>(&self, key: u64, events: &'e Events) -> Option<Resolved<'e>> {
        events.resolve_captured(self.counter_by_key(key)?)
    }
}

impl Events {
    /// The event description of a captured counter: by fixed name, or by slot and programmed event code.
    pub fn resolve_captured(&self, counter: &CapturedCounter) -> Option<Resolved<'_>> {
        self.resolve(&counter.counter, counter.event)
    }
}

fn write_target(out: &mut String, t: &Target) {
    out.push_str("  <target");
    push_int(out, "sample_rate", t.sample_rate);
    push_int(out, "sample_rate_gpu", t.sample_rate_gpu);
    push_opt(out, "name", t.name.as_deref());
    push_opt(out, "gpu_public_name", t.gpu_public_name.as_deref());
    push_int(out, "cores", t.cores);
    push_int(out, "gpu_cores", t.gpu_cores);
    push_opt(out, "gatord_src_md5sum", t.gatord_src_md5sum.as_deref());
    push_opt(out, "gatord_build_id", t.gatord_build_id.as_deref());
    if let Some(cpuid) = t.cpuid {
        push_attr(out, "cpuid", &format!("0x{cpuid:x}"));
    }
    push_yes_no(out, "supports_live", t.supports_live);
    push_yes_no(out, "local_capture", t.local_capture);
    push_yes_no(out, "off_cpu_profiling", t.off_cpu_profiling);
    push_opt(out, "os", t.os.as_deref());
    push_opt(out, "os_version", t.os_version.as_deref());
    push_extra(out, &t.extra);
    out.push_str(" />\n");
}

fn write_counter(out: &mut String, c: &CapturedCounter) {
    out.push_str("    <counter");
    push_attr(out, "key", &format!("0x{:x}", c.key));
    let name = if c.class == Some(EventClass::Constant) {
        "counter"
    } else {
        "type"
    };
    push_attr(out, name, &c.counter);
    if let Some(event) = c.event {
        push_attr(out, "event", &format!("0x{event:x}"));
    }
    push_int(out, "count", c.count);
    push_int(out, "cores", c.cores);
    push_opt(out, "title", c.title.as_deref());
    push_opt(out, "name", c.name.as_deref());
    push_opt(out, "class", c.class.as_ref().map(EventClass::as_str));
    push_opt(out, "mode", c.mode.as_deref());
    push_extra(out, &c.extra);
    out.push_str(" />\n");
}

fn read_process(el: Element<'_, '_>) -> CapturedProcess {
    CapturedProcess {
        process_name: el.string("process_name"),
        package_name: el.string("package_name"),
        activity_name: el.string("activity_name"),
        activity_arguments: el.string("activity_arguments"),
        extra: el.extra(&[
            "process_name",
            "package_name",
            "activity_name",
            "activity_arguments",
        ]),
    }
}

fn read_target(el: Element<'_, '_>) -> Result<Target, XmlError> {
    Ok(Target {
        sample_rate: el.int("sample_rate")?,
        sample_rate_gpu: el.int("sample_rate_gpu")?,
        name: el.string("name"),
        gpu_public_name: el.string("gpu_public_name"),
        cores: el.int("cores")?,
        gpu_cores: el.int("gpu_cores")?,
        gatord_src_md5sum: el.string("gatord_src_md5sum"),
        gatord_build_id: el.string("gatord_build_id"),
        cpuid: el.hex("cpuid")?,
        supports_live: el.boolean("supports_live")?,
        local_capture: el.boolean("local_capture")?,
        off_cpu_profiling: el.boolean("off_cpu_profiling")?,
        os: el.string("os"),
        os_version: el.string("os_version"),
        extra: el.extra(&[
            "sample_rate",
            "sample_rate_gpu",
            "name",
            "gpu_public_name",
            "cores",
            "gpu_cores",
            "gatord_src_md5sum",
            "gatord_build_id",
            "cpuid",
            "supports_live",
            "local_capture",
            "off_cpu_profiling",
            "os",
            "os_version",
        ]),
    })
}

fn read_counter(el: Element<'_, '_>) -> Result<CapturedCounter, XmlError> {
    let counter = match el.str("type").or_else(|| el.str("counter")) {
        Some(name) => name.to_owned(),
        None => {
            return Err(XmlError::MissingAttribute {
                element: "counter",
                attribute: "type",
                position: el.position(),
            })
        }
    };
    Ok(CapturedCounter {
        key: required_int(&el, "key")?,
        counter,
        event: el.int("event")?,
        count: el.int("count")?,
        cores: el.int("cores")?,
        title: el.string("title"),
        name: el.string("name"),
        class: el.str("class").map(EventClass::parse),
        mode: el.string("mode"),
        extra: el.extra(&[
            "key", "type", "counter", "event", "count", "cores", "title", "name", "class", "mode",
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_hexadecimal_and_constants_use_counter() {
        let doc = Captured::parse(
            "<captured version=\"1\" protocol=\"950\"><target cpuid=\"0x41d03\" cores=\"4\"/><counters>\
             <counter key=\"0x5e\" type=\"M\" event=\"0x11\" count=\"100\" cores=\"2\"/>\
             <counter key=\"0x4\" counter=\"C\" title=\"T\" name=\"N\" class=\"constant\" mode=\"per-core\"/>\
             <spe key=\"0x8\" id=\"s\"/></counters><templates><t/></templates></captured>",
        )
        .unwrap();
        assert_eq!(doc.protocol, Some(950));
        assert_eq!(doc.target.as_ref().unwrap().cpuid, Some(0x41d03));
        let m = doc.counter_by_key(0x5e).unwrap();
        assert_eq!(
            (m.counter.as_str(), m.event, m.count, m.cores),
            ("M", Some(0x11), Some(100), Some(2))
        );
        let c = doc.counter_by_name("C").unwrap();
        assert_eq!(c.key, 4);
        assert_eq!(c.class, Some(EventClass::Constant));
        assert_eq!(
            doc.spes,
            [CapturedSpe {
                key: 8,
                id: "s".into()
            }]
        );
        assert_eq!(doc.templates.as_ref().unwrap().children[0].name, "t");
        assert!(doc.counter_by_key(0x99).is_none());
    }

    #[test]
    fn bad_key_maps_are_refused() {
        for text in [
            "<captured><counters><counter type=\"M\"/></counters></captured>",
            "<captured><counters><counter key=\"0xzz\" type=\"M\"/></counters></captured>",
            "<captured><counters><counter key=\"0x5e\"/></counters></captured>",
            "<captured><counters><spe key=\"1\"/></counters></captured>",
            "<captured protocol=\"nine\"/>",
            "<captured><target supports_live=\"sometimes\"/></captured>",
            "<captured><counters><counter key=\"-1\" type=\"M\"/></counters></captured>",
        ] {
            assert!(Captured::parse(text).is_err(), "{text}");
        }
    }
}
