//! The layer's settings, read from the environment as layers are configured: what to write where, which
//! frames, which mode, which queries, which of lizard's counters.
//!
//! | variable | value | default |
//! |---|---|---|
//! | `LIZARD_VK_OUTPUT` | the Perfetto trace's path; the capture document is written beside it (`.json`); `{pid}` is replaced by the process id, `{n}` by the smallest number from 1 whose trace does not exist yet (one trace per instance's session when an application creates instances one after another) | `lizard-vk-{pid}.pftrace` |
//! | `LIZARD_VK_MODE` | `frame`, `submit` or `renderpass` ([`Mode`]) | `frame` |
//! | `LIZARD_VK_FRAMES` | the frames measured: `N`, `A..B` (B not included), `A..=B`, `A..` or `..B` ([`FrameRange`]) | every frame |
//! | `LIZARD_VK_COUNTERS` | lizard's counters sampled at each present, by name, comma-separated; `none` for none | the engine's default choice |
//! | `LIZARD_VK_QUERIES` | the device queries around each workload: `timestamps`, `pipeline-statistics`, comma-separated; `none` for none ([`Queries`]) | both |
//! | `LIZARD_VK_GATORD` | gatord's address for lizard's counters (`host:port`), or `off` | `127.0.0.1:8080` |
//!
//! A value that cannot be read is an error ([`ConfigError`]) and leaves that setting at its default: the
//! layer says so on standard error and in the trace, and goes on.

use std::fmt;
use std::path::PathBuf;

/// How the layer measures counters per workload, and what it changes in the application's submissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// lizard's counters sampled at each present, beside timestamps per workload. Changes nothing in the
    /// application's submissions: a frame's counters cover the whole frame.
    #[default]
    Frame,
    /// Each `vkQueueSubmit` of a measured frame split into one submission per command buffer, with a wait
    /// for each and lizard's counters read between them: counters per command buffer, on every driver.
    /// Serialises the GPU: the trace gives the waits added and the frame time with and without them.
    Submit,
    /// Counters per render pass (and per other workload) by trapping the GPU after each one: only on Arm's
    /// own driver (the trap sets events from the host after submission, which the Vulkan specification
    /// does not allow), and only when asked for. Elsewhere it is refused with the reason, and `frame` is
    /// used, unless `LIZARD_VK_RENDERPASS_ANY_DRIVER=1` forces it to test the mechanism.
    RenderPass,
}

impl Mode {
    /// The name the variable takes.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Frame => "frame",
            Mode::Submit => "submit",
            Mode::RenderPass => "renderpass",
        }
    }

    /// Whether the mode waits for the GPU inside the application's calls.
    pub fn serialises(self) -> bool {
        !matches!(self, Mode::Frame)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The frames the layer measures: frame `n` is the work submitted after the application's `n`-th present
/// (counting from 0) up to and including its next present. The default is every frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameRange {
    /// The first frame measured.
    pub first: u64,
    /// The first frame not measured (`None`: every frame from `first` on).
    pub end: Option<u64>,
}

impl FrameRange {
    /// Whether frame `frame` is measured.
    pub fn contains(&self, frame: u64) -> bool {
        frame >= self.first && self.end.is_none_or(|end| frame < end)
    }

    /// Whether every frame from `frame` on lies past the range.
    pub fn is_past(&self, frame: u64) -> bool {
        self.end.is_some_and(|end| frame >= end)
    }

    /// Reads `N`, `A..B`, `A..=B`, `A..` or `..B`.
    pub fn parse(text: &str) -> Result<FrameRange, ConfigError> {
        let bad = |reason: &'static str| ConfigError::Frames {
            value: text.to_owned(),
            reason,
        };
        let number = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| bad("not a frame number"))
        };
        let text_trimmed = text.trim();
        let range = match text_trimmed.split_once("..") {
            None => {
                let n = number(text_trimmed)?;
                FrameRange {
                    first: n,
                    end: Some(n.checked_add(1).ok_or(bad("too large"))?),
                }
            }
            Some((first, rest)) => {
                let first = if first.trim().is_empty() {
                    0
                } else {
                    number(first)?
                };
                let end = match rest.strip_prefix('=') {
                    Some(last) => Some(number(last)?.checked_add(1).ok_or(bad("too large"))?),
                    None if rest.trim().is_empty() => None,
                    None => Some(number(rest)?),
                };
                FrameRange { first, end }
            }
        };
        if range.end.is_some_and(|end| end <= range.first) {
            return Err(bad("the range holds no frame"));
        }
        Ok(range)
    }
}

impl fmt::Display for FrameRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.end {
            Some(end) => write!(f, "{}..{end}", self.first),
            None => write!(f, "{}..", self.first),
        }
    }
}

/// The device queries recorded around each workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queries {
    /// A timestamp before and after each workload: its time on the GPU.
    pub timestamps: bool,
    /// A pipeline-statistics query around each render pass (vertices, primitives, shader invocations) and
    /// each dispatch (compute invocations), where the device has them.
    pub pipeline_statistics: bool,
}

impl Default for Queries {
    fn default() -> Self {
        Queries {
            timestamps: true,
            pipeline_statistics: true,
        }
    }
}

impl Queries {
    /// Whether any query is recorded.
    pub fn any(&self) -> bool {
        self.timestamps || self.pipeline_statistics
    }

    /// Reads `timestamps`, `pipeline-statistics` (comma-separated) or `none`.
    pub fn parse(text: &str) -> Result<Queries, ConfigError> {
        let mut queries = Queries {
            timestamps: false,
            pipeline_statistics: false,
        };
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "none" => {}
                "timestamps" => queries.timestamps = true,
                "pipeline-statistics" => queries.pipeline_statistics = true,
                _ => {
                    return Err(ConfigError::Query {
                        value: word.to_owned(),
                    })
                }
            }
        }
        Ok(queries)
    }
}

/// Which of lizard's counters are sampled at each present.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Counters {
    /// The engine's default choice.
    #[default]
    Default,
    /// None: lizard's engine is not started.
    None,
    /// These, by the names `lizard list` shows.
    Named(Vec<String>),
}

/// Where lizard's engine finds gatord.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Gatord {
    /// The engine's default address (`127.0.0.1:8080`).
    #[default]
    Default,
    /// Not used.
    Off,
    /// At this `host:port`.
    At(String),
}

/// A setting the layer could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `LIZARD_VK_MODE` names no mode.
    #[error("LIZARD_VK_MODE={value}: not a mode (frame, submit, renderpass)")]
    Mode {
        /// The value given.
        value: String,
    },
    /// `LIZARD_VK_FRAMES` is not a range.
    #[error("LIZARD_VK_FRAMES={value}: {reason} (N, A..B, A..=B, A.. or ..B)")]
    Frames {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `LIZARD_VK_QUERIES` names an unknown query.
    #[error("LIZARD_VK_QUERIES: {value} is not a query (timestamps, pipeline-statistics, none)")]
    Query {
        /// The word given.
        value: String,
    },
    /// A variable's value is not text.
    #[error("{variable} is not valid UTF-8")]
    NotText {
        /// The variable.
        variable: &'static str,
    },
}

/// Every setting of the layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The Perfetto trace's path.
    pub output: PathBuf,
    /// The mode asked for.
    pub mode: Mode,
    /// The frames measured.
    pub frames: FrameRange,
    /// lizard's counters sampled at each present.
    pub counters: Counters,
    /// The queries around each workload.
    pub queries: Queries,
    /// Where lizard's engine finds gatord.
    pub gatord: Gatord,
}

impl Config {
    /// The settings of the process's environment, and the errors of those that could not be read (each
    /// left at its default).
    pub fn from_env() -> (Config, Vec<ConfigError>) {
        Config::from_vars(|name| std::env::var_os(name).map(|v| v.into_string().map_err(|_| name)))
    }

    /// The settings from `var`, which gives a variable's value (`Err` with the name when it is not text).
    pub fn from_vars(
        var: impl Fn(&'static str) -> Option<Result<String, &'static str>>,
    ) -> (Config, Vec<ConfigError>) {
        let mut errors = Vec::new();
        let mut get = |name: &'static str| match var(name) {
            None => None,
            Some(Ok(value)) if value.trim().is_empty() => None,
            Some(Ok(value)) => Some(value),
            Some(Err(variable)) => {
                errors.push(ConfigError::NotText { variable });
                None
            }
        };
        let output = get("LIZARD_VK_OUTPUT");
        let mode = get("LIZARD_VK_MODE");
        let frames = get("LIZARD_VK_FRAMES");
        let counters = get("LIZARD_VK_COUNTERS");
        let queries = get("LIZARD_VK_QUERIES");
        let gatord = get("LIZARD_VK_GATORD");
        let pid = std::process::id().to_string();
        let output = PathBuf::from(
            output
                .unwrap_or_else(|| "lizard-vk-{pid}.pftrace".to_owned())
                .replace("{pid}", &pid),
        );
        let mode = match mode.as_deref().map(str::trim) {
            None | Some("frame") => Mode::Frame,
            Some("submit") => Mode::Submit,
            Some("renderpass") => Mode::RenderPass,
            Some(other) => {
                errors.push(ConfigError::Mode {
                    value: other.to_owned(),
                });
                Mode::Frame
            }
        };
        let frames = match frames.map(|f| FrameRange::parse(&f)) {
            None => FrameRange::default(),
            Some(Ok(range)) => range,
            Some(Err(e)) => {
                errors.push(e);
                FrameRange::default()
            }
        };
        let queries = match queries.map(|q| Queries::parse(&q)) {
            None => Queries::default(),
            Some(Ok(q)) => q,
            Some(Err(e)) => {
                errors.push(e);
                Queries::default()
            }
        };
        let counters = match counters.as_deref().map(str::trim) {
            None => Counters::Default,
            Some("none") => Counters::None,
            Some(list) => Counters::Named(
                list.split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
        };
        let gatord = match gatord.as_deref().map(str::trim) {
            None => Gatord::Default,
            Some("off") => Gatord::Off,
            Some(address) => Gatord::At(address.to_owned()),
        };
        (
            Config {
                output,
                mode,
                frames,
                counters,
                queries,
                gatord,
            },
            errors,
        )
    }

    /// The capture document's path beside trace `output`: the trace's, with the extension `json`.
    pub fn document_path(output: &std::path::Path) -> PathBuf {
        output.with_extension("json")
    }

    /// The trace's path for a new session: [`output`](Self::output), with `{n}` replaced by the smallest
    /// number from 1 whose file does not exist yet (the file is created empty, so that a session starting
    /// at the same time takes the next number).
    pub fn claim_output(&self) -> std::io::Result<PathBuf> {
        let text = self.output.to_string_lossy();
        if !text.contains("{n}") {
            return Ok(self.output.clone());
        }
        for n in 1..100_000u32 {
            let path = PathBuf::from(text.replace("{n}", &n.to_string()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "every {n} up to 99999 is taken",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(
        pairs: &'a [(&'a str, &'a str)],
    ) -> impl Fn(&'static str) -> Option<Result<String, &'static str>> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| Ok((*v).to_owned()))
        }
    }

    #[test]
    fn frame_ranges_read_as_written() {
        let r = |s| FrameRange::parse(s).unwrap();
        assert_eq!(
            r("5"),
            FrameRange {
                first: 5,
                end: Some(6)
            }
        );
        assert_eq!(
            r("10..20"),
            FrameRange {
                first: 10,
                end: Some(20)
            }
        );
        assert_eq!(
            r("10..=20"),
            FrameRange {
                first: 10,
                end: Some(21)
            }
        );
        assert_eq!(
            r("3.."),
            FrameRange {
                first: 3,
                end: None
            }
        );
        assert_eq!(
            r("..4"),
            FrameRange {
                first: 0,
                end: Some(4)
            }
        );
        assert!(r("10..20").contains(10) && !r("10..20").contains(20));
        assert!(r("10..20").is_past(20) && !r("3..").is_past(u64::MAX));
        for bad in ["x", "5..5", "9..2", "1..=x", "-1"] {
            assert!(FrameRange::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_value_is_an_error_and_its_default_stays() {
        let (config, errors) = Config::from_vars(vars(&[
            ("LIZARD_VK_MODE", "fast"),
            ("LIZARD_VK_FRAMES", "2..1"),
            ("LIZARD_VK_QUERIES", "timestamps,occlusion"),
            ("LIZARD_VK_OUTPUT", "/tmp/run-{pid}.pftrace"),
        ]));
        assert_eq!(config.mode, Mode::Frame);
        assert_eq!(config.frames, FrameRange::default());
        assert_eq!(config.queries, Queries::default());
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].to_string().contains("fast"));
        let pid = std::process::id();
        assert_eq!(
            config.output,
            PathBuf::from(format!("/tmp/run-{pid}.pftrace"))
        );
        assert_eq!(
            Config::document_path(&config.output),
            PathBuf::from(format!("/tmp/run-{pid}.json"))
        );
    }

    #[test]
    fn each_session_claims_the_next_free_number() {
        let dir = std::env::temp_dir().join(format!("lizard-vk-claim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pattern = dir.join("t-{n}.pftrace");
        let (config, _) = Config::from_vars(|name| {
            (name == "LIZARD_VK_OUTPUT").then(|| Ok(pattern.to_string_lossy().into_owned()))
        });
        assert_eq!(config.claim_output().unwrap(), dir.join("t-1.pftrace"));
        assert_eq!(config.claim_output().unwrap(), dir.join("t-2.pftrace"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_setting_reads() {
        let (config, errors) = Config::from_vars(vars(&[
            ("LIZARD_VK_MODE", "submit"),
            ("LIZARD_VK_FRAMES", "10.."),
            ("LIZARD_VK_QUERIES", "none"),
            ("LIZARD_VK_COUNTERS", "TaskClock, ContextSwitches"),
            ("LIZARD_VK_GATORD", "off"),
        ]));
        assert!(errors.is_empty());
        assert_eq!(config.mode, Mode::Submit);
        assert!(config.mode.serialises());
        assert!(!config.queries.any());
        assert_eq!(
            config.counters,
            Counters::Named(vec!["TaskClock".into(), "ContextSwitches".into()])
        );
        assert_eq!(config.gatord, Gatord::Off);
    }
}
