//! [`CurrentConfig`]: the `<current_config>` document of RESPONSE_CURRENT_CONFIG.

use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader;
use crate::Attributes;

/// `<state …/>`: what the daemon is doing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DaemonState {
    /// `is_system_wide`.
    pub is_system_wide: Option<bool>,
    /// `is_waiting_on_command`.
    pub is_waiting_on_command: Option<bool>,
    /// `wait_for_process`.
    pub wait_for_process: Option<String>,
    /// `capture_working_directory`.
    pub capture_working_directory: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// The `<current_config pid uid>` document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CurrentConfig {
    /// `pid` of the daemon.
    pub pid: Option<u32>,
    /// `uid` the daemon runs as.
    pub uid: Option<u32>,
    /// `<state>`.
    pub state: Option<DaemonState>,
    /// `<pids_to_capture><pid value/>…`.
    pub pids_to_capture: Vec<u32>,
    /// Other elements, kept verbatim.
    pub other: Vec<RawElement>,
    /// Attributes of the root not modelled above.
    pub extra: Attributes,
}

impl CurrentConfig {
    /// Reads a current_config document.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        let doc = reader::parse_document(text, 0)?;
        let root = reader::root(&doc, "current_config", 0)?;
        let mut out = CurrentConfig {
            pid: root.int("pid")?,
            uid: root.int("uid")?,
            extra: root.extra(&["pid", "uid"]),
            ..CurrentConfig::default()
        };
        for child in root.children() {
            match child.tag_name().name() {
                "state" => {
                    let s = root.child(child, "state");
                    out.state = Some(DaemonState {
                        is_system_wide: s.boolean("is_system_wide")?,
                        is_waiting_on_command: s.boolean("is_waiting_on_command")?,
                        wait_for_process: s.string("wait_for_process"),
                        capture_working_directory: s.string("capture_working_directory"),
                        extra: s.extra(&[
                            "is_system_wide",
                            "is_waiting_on_command",
                            "wait_for_process",
                            "capture_working_directory",
                        ]),
                    });
                }
                "pids_to_capture" => {
                    let list = root.child(child, "pids_to_capture");
                    for pid in list.children().filter(|n| n.tag_name().name() == "pid") {
                        let p = list.child(pid, "pid");
                        out.pids_to_capture
                            .push(crate::counters::required_int(&p, "value")?);
                    }
                }
                _ => out.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(out)
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_observed_reply() {
        let text = "\n<current_config pid=\"24626\" uid=\"0\">\n<state is_system_wide=\"yes\" is_waiting_on_command=\"no\" \
                    capture_working_directory=\"/tmp/x\" /></current_config>\n";
        let c = CurrentConfig::parse(text).unwrap();
        assert_eq!((c.pid, c.uid), (Some(24626), Some(0)));
        let s = c.state.unwrap();
        assert_eq!(s.is_system_wide, Some(true));
        assert_eq!(s.is_waiting_on_command, Some(false));
        assert_eq!(s.capture_working_directory.as_deref(), Some("/tmp/x"));
    }

    #[test]
    fn reads_pids_and_refuses_bad_ones() {
        let c = CurrentConfig::parse(
            "<current_config><pids_to_capture><pid value=\"7\"/><pid value=\"9\"/></pids_to_capture></current_config>",
        )
        .unwrap();
        assert_eq!(c.pids_to_capture, [7, 9]);
        assert!(matches!(
            CurrentConfig::parse(
                "<current_config><pids_to_capture><pid/></pids_to_capture></current_config>"
            ),
            Err(XmlError::MissingAttribute {
                attribute: "value",
                ..
            })
        ));
        assert!(matches!(
            CurrentConfig::parse("<current_config pid=\"-3\"/>"),
            Err(XmlError::InvalidNumber { .. })
        ));
        assert!(matches!(
            CurrentConfig::parse("<current_config><state is_system_wide=\"?\"/></current_config>"),
            Err(XmlError::InvalidValue { .. })
        ));
    }
}
