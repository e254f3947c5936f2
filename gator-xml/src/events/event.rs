//! [`Event`]: one `<event>` element of an events document, with every attribute gatord documents.

use crate::error::XmlError;
use crate::event_class::{DisplayMode, EventClass};
use crate::reader::Element;
use crate::shared_str::{DocumentText, SharedStr};
use crate::units::Units;
use crate::Attributes;

/// One entry of an `activityN` / `activity_colorN` attribute pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The `N` in `activityN`.
    pub index: u32,
    /// The activity label (`activityN`), if given.
    pub name: Option<String>,
    /// The colour (`activity_colorN`, `0x00RRGGBB`), if given.
    pub color: Option<u32>,
}

/// A `<valid-op-type class sub-class/>` child of an SPE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidOpType {
    /// The operation class (`load-store`, `branch`, `other`).
    pub class: String,
    /// The operation sub-class (`load`, `sve`, ...), if given.
    pub sub_class: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// The ftrace attributes of an event (`events-ftrace.xml` and friends).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FtraceAttributes {
    /// `regex`: the trace line pattern.
    pub regex: Option<String>,
    /// `tracepoint`: the tracepoint (`power/cpu_idle`, ...).
    pub tracepoint: Option<String>,
    /// `arg`: the tracepoint argument that is the value.
    pub arg: Option<String>,
}

/// The SPE-specific attributes and children of an event inside `<spe>`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpeEventAttributes {
    /// `bit`: the bit of the SPE events packet.
    pub bit: Option<u32>,
    /// `filter-bit`.
    pub filter_bit: Option<u32>,
    /// `condition-bit`.
    pub condition_bit: Option<u32>,
    /// `ratio-label`.
    pub ratio_label: Option<String>,
    /// `set-label`.
    pub set_label: Option<String>,
    /// `clear-label`.
    pub clear_label: Option<String>,
    /// `set-mode` (`neutral`, `positive`, ...).
    pub set_mode: Option<String>,
    /// `show-by-default` (e.g. `set`).
    pub show_by_default: Option<String>,
    /// `<valid-op-type>` children.
    pub valid_op_types: Vec<ValidOpType>,
}

/// An `<event>`: a counter (fixed, when `counter` is set) or a programmable event code.
///
/// Attributes that are absent stay `None`; the `effective_*` methods apply gatord's defaults. Attributes this
/// crate does not know are kept in [`Event::extra`], so a document read here loses nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    /// `counter`: the fixed counter name. Absent for programmable events, which are selected by
    /// [`Event::event`] in a slot of the category's counter set.
    pub counter: Option<String>,
    /// `event`: the event code (hexadecimal with `0x`, or decimal).
    pub event: Option<u64>,
    /// `title`: the group shown first in "title: name". SPE events have none.
    pub title: Option<SharedStr>,
    /// `name`: the event name. Required.
    pub name: SharedStr,
    /// `description`.
    pub description: Option<SharedStr>,
    /// `class`; absent means delta.
    pub class: Option<EventClass>,
    /// `display`.
    pub display: Option<DisplayMode>,
    /// `units`.
    pub units: Option<Units>,
    /// `multiplier`; absent means 1.
    pub multiplier: Option<f64>,
    /// `average_selection` (yes|no).
    pub average_selection: Option<bool>,
    /// `average_cores` (yes).
    pub average_cores: Option<bool>,
    /// `percentage` (yes).
    pub percentage: Option<bool>,
    /// `derived` (yes).
    pub derived: Option<bool>,
    /// `per_cpu` (yes).
    pub per_cpu: Option<bool>,
    /// `proc` (no).
    pub proc: Option<bool>,
    /// `advanced` (yes): hidden behind an "advanced" switch in the UI.
    pub advanced: Option<bool>,
    /// `rendering_type` (e.g. `bar`).
    pub rendering_type: Option<String>,
    /// `series_composition` (e.g. `overlay`).
    pub series_composition: Option<String>,
    /// `color` (`0x00RRGGBB`).
    pub color: Option<u32>,
    /// `activityN` / `activity_colorN` pairs, ordered by `N`.
    pub activities: Vec<Activity>,
    /// `cores`: the number of cores of an uncore counter.
    pub cores: Option<u32>,
    /// `option_set`: the name of an `<option_set>` of the category that qualifies this event.
    pub option_set: Option<String>,
    /// `regex`, `tracepoint` and `arg`: present on ftrace events only.
    pub ftrace: Option<Box<FtraceAttributes>>,
    /// `flag` (a mask, hexadecimal with `0x` or decimal).
    pub flag: Option<u64>,
    /// The attributes and children of SPE events (bits of the SPE events packet); present on those only.
    pub spe: Option<Box<SpeEventAttributes>>,
    /// Attributes not modelled above (for example `ddk_version`, added by the daemon at run time).
    pub extra: Attributes,
}

impl Event {
    /// The class gatord applies: the `class` attribute, or delta when absent.
    pub fn effective_class(&self) -> EventClass {
        self.class.clone().unwrap_or(EventClass::Delta)
    }

    /// The multiplier gatord applies: the `multiplier` attribute, or 1 when absent.
    pub fn effective_multiplier(&self) -> f64 {
        self.multiplier.unwrap_or(1.0)
    }

    /// "title: name", as Streamline labels an event (just the name when there is no title).
    pub fn label(&self) -> String {
        match &self.title {
            Some(title) => format!("{title}: {}", self.name),
            None => self.name.to_string(),
        }
    }

    /// Every attribute of this event rendered back to text, `(name, value)`, in a fixed order.
    ///
    /// Numbers are written in gatord's style (`0x` hexadecimal for codes, masks and colours) and flags as
    /// `yes`/`no`, so values equal the source text up to number formatting and boolean spelling.
    pub fn attributes(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut put = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                out.push((name.to_owned(), v));
            }
        };
        let yes_no = |b: Option<bool>| b.map(|b| if b { "yes" } else { "no" }.to_owned());
        let hex = |v: Option<u64>| v.map(|v| format!("0x{v:x}"));
        put("counter", self.counter.clone());
        put("event", hex(self.event));
        put("title", self.title.as_ref().map(String::from));
        put("name", Some(self.name.to_string()));
        put("description", self.description.as_ref().map(String::from));
        put("class", self.class.as_ref().map(|c| c.as_str().to_owned()));
        put(
            "display",
            self.display.as_ref().map(|d| d.as_str().to_owned()),
        );
        put("units", self.units.as_ref().map(|u| u.as_str().to_owned()));
        put("multiplier", self.multiplier.map(|m| m.to_string()));
        put("average_selection", yes_no(self.average_selection));
        put("average_cores", yes_no(self.average_cores));
        put("percentage", yes_no(self.percentage));
        put("derived", yes_no(self.derived));
        put("per_cpu", yes_no(self.per_cpu));
        put("proc", yes_no(self.proc));
        put("advanced", yes_no(self.advanced));
        put("rendering_type", self.rendering_type.clone());
        put("series_composition", self.series_composition.clone());
        put("color", self.color.map(|c| format!("0x{c:08x}")));
        for a in &self.activities {
            put(&format!("activity{}", a.index), a.name.clone());
            put(
                &format!("activity_color{}", a.index),
                a.color.map(|c| format!("0x{c:08x}")),
            );
        }
        put("cores", self.cores.map(|c| c.to_string()));
        put("option_set", self.option_set.clone());
        if let Some(t) = &self.ftrace {
            put("regex", t.regex.clone());
            put("tracepoint", t.tracepoint.clone());
            put("arg", t.arg.clone());
        }
        put("flag", hex(self.flag));
        if let Some(spe) = &self.spe {
            put("bit", spe.bit.map(|v| v.to_string()));
            put("filter-bit", spe.filter_bit.map(|v| v.to_string()));
            put("condition-bit", spe.condition_bit.map(|v| v.to_string()));
            put("ratio-label", spe.ratio_label.clone());
            put("set-label", spe.set_label.clone());
            put("clear-label", spe.clear_label.clone());
            put("set-mode", spe.set_mode.clone());
            put("show-by-default", spe.show_by_default.clone());
        }
        for (k, v) in &self.extra {
            put(k, Some(v.clone()));
        }
        out
    }

    /// Reads an `<event>` element onto the end of `events`; one pass over its attributes. Names, titles and
    /// descriptions are views of `texts`, the document's text.
    ///
    /// The event is built in its place in `events` rather than moved there; on error `events` is left with a
    /// partly read last entry, which the callers drop along with the rest of the document.
    pub(crate) fn read_into(
        el: Element<'_, '_>,
        texts: &DocumentText,
        events: &mut Vec<Event>,
    ) -> Result<(), XmlError> {
        let at = events.len();
        events.push(Event::default());
        let ev = &mut events[at];
        let mut has_name = false;
        for attr in el.node.attributes() {
            let name = attr.name();
            let v = attr.value();
            match name {
                "counter" => ev.counter = Some(v.to_owned()),
                "event" => ev.event = Some(el.int_value(name, v)?),
                "title" => ev.title = Some(texts.get(v)),
                "name" => {
                    ev.name = texts.get(v);
                    has_name = true;
                }
                "description" => ev.description = Some(texts.get(v)),
                "class" => ev.class = Some(EventClass::parse(v)),
                "display" => ev.display = Some(DisplayMode::parse(v)),
                "units" => ev.units = Some(Units::parse(v)),
                "multiplier" => ev.multiplier = Some(el.float_value(name, v)?),
                "average_selection" => ev.average_selection = Some(el.bool_value(name, v)?),
                "average_cores" => ev.average_cores = Some(el.bool_value(name, v)?),
                "percentage" => ev.percentage = Some(el.bool_value(name, v)?),
                "derived" => ev.derived = Some(el.bool_value(name, v)?),
                "per_cpu" => ev.per_cpu = Some(el.bool_value(name, v)?),
                "proc" => ev.proc = Some(el.bool_value(name, v)?),
                "advanced" => ev.advanced = Some(el.bool_value(name, v)?),
                "rendering_type" => ev.rendering_type = Some(v.to_owned()),
                "series_composition" => ev.series_composition = Some(v.to_owned()),
                "color" => ev.color = Some(el.hex_value(name, v)?),
                "cores" => ev.cores = Some(el.int_value(name, v)?),
                "option_set" => ev.option_set = Some(v.to_owned()),
                "regex" => ftrace(ev).regex = Some(v.to_owned()),
                "tracepoint" => ftrace(ev).tracepoint = Some(v.to_owned()),
                "arg" => ftrace(ev).arg = Some(v.to_owned()),
                "flag" => ev.flag = Some(el.int_value(name, v)?),
                "bit" => spe(ev).bit = Some(el.int_value(name, v)?),
                "filter-bit" => spe(ev).filter_bit = Some(el.int_value(name, v)?),
                "condition-bit" => spe(ev).condition_bit = Some(el.int_value(name, v)?),
                "ratio-label" => spe(ev).ratio_label = Some(v.to_owned()),
                "set-label" => spe(ev).set_label = Some(v.to_owned()),
                "clear-label" => spe(ev).clear_label = Some(v.to_owned()),
                "set-mode" => spe(ev).set_mode = Some(v.to_owned()),
                "show-by-default" => spe(ev).show_by_default = Some(v.to_owned()),
                _ => {
                    if !read_activity(&el, &mut ev.activities, name, v)? {
                        ev.extra.insert(name.to_owned(), v.to_owned());
                    }
                }
            }
        }
        if !has_name {
            return Err(el.missing("name"));
        }
        ev.activities.sort_by_key(|a| a.index);
        for child in el.children() {
            if child.tag_name().name() == "valid-op-type" {
                let c = el.child(child, "valid-op-type");
                let ([class, sub_class], extra) = c.known(["class", "sub-class"]);
                spe(ev).valid_op_types.push(ValidOpType {
                    class: class.ok_or_else(|| c.missing("class"))?.to_owned(),
                    sub_class: sub_class.map(str::to_owned),
                    extra,
                });
            }
        }
        Ok(())
    }
}

fn ftrace(ev: &mut Event) -> &mut FtraceAttributes {
    ev.ftrace.get_or_insert_with(Box::default)
}

fn spe(ev: &mut Event) -> &mut SpeEventAttributes {
    ev.spe.get_or_insert_with(Box::default)
}

/// Reads `activityN` / `activity_colorN`; false when `name` is neither.
fn read_activity(
    el: &Element<'_, '_>,
    activities: &mut Vec<Activity>,
    name: &str,
    value: &str,
) -> Result<bool, XmlError> {
    let (index, is_color) = if let Some(n) = name.strip_prefix("activity_color") {
        (n, true)
    } else if let Some(n) = name.strip_prefix("activity") {
        (n, false)
    } else {
        return Ok(false);
    };
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(false);
    }
    let Ok(index) = index.parse::<u32>() else {
        return Ok(false);
    };
    let pos = match activities.iter().position(|a| a.index == index) {
        Some(p) => p,
        None => {
            activities.push(Activity {
                index,
                name: None,
                color: None,
            });
            activities.len() - 1
        }
    };
    if is_color {
        activities[pos].color = Some(el.hex_value(name, value)?);
    } else {
        activities[pos].name = Some(value.to_owned());
    }
    Ok(true)
}
