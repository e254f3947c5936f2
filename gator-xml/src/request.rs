//! [`Request`]: the `<request type="…"/>` document a client sends with COMMAND_REQUEST_XML.
//!
//! gatord only finds `<request>` below the document node when the XML declaration is present, so the writer
//! always emits it. The reader also accepts the unquoted form `<request type=events/>` that Lizard sends and
//! that gatord's mxml parser tolerates, so a daemon-side implementation can serve such clients.

use crate::error::XmlError;
use crate::reader;
use crate::write::{push_attr, DECLARATION};
use std::fmt;

/// The document kinds a client can ask gatord for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestType {
    /// `events`: the merged events document.
    Events,
    /// `counters`: the counters available on the target.
    Counters,
    /// `configuration`: the saved (or default) counter configuration.
    Configuration,
    /// `defaults`: the built-in default configuration.
    Defaults,
    /// `captured`: the capture description with the counter key map.
    Captured,
    /// Any other type (gatord answers NAK "Unknown request").
    Other(String),
}

impl RequestType {
    /// Maps the text of a `type` attribute.
    pub fn parse(text: &str) -> Self {
        match text {
            "events" => Self::Events,
            "counters" => Self::Counters,
            "configuration" => Self::Configuration,
            "defaults" => Self::Defaults,
            "captured" => Self::Captured,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The `type` attribute text.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Events => "events",
            Self::Counters => "counters",
            Self::Configuration => "configuration",
            Self::Defaults => "defaults",
            Self::Captured => "captured",
            Self::Other(text) => text,
        }
    }
}

impl fmt::Display for RequestType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `<request type="…"/>` document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// What is requested.
    pub kind: RequestType,
}

impl Request {
    /// A request for `kind`.
    pub fn new(kind: RequestType) -> Self {
        Self { kind }
    }

    /// The document text: declaration, newline, `<request type="…"/>` (what Streamline sends, byte for byte).
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(64);
        out.push_str(DECLARATION);
        out.push_str("\n<request");
        push_attr(&mut out, "type", self.kind.as_str());
        out.push_str("/>");
        out
    }

    /// The document bytes, ready to be framed as a COMMAND_REQUEST_XML payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_xml().into_bytes()
    }

    /// Reads a request document; the `type` value may be quoted or (as gatord's parser allows) unquoted.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        match reader::parse_document(text, 0) {
            Ok(doc) => {
                let root = reader::root(&doc, "request", 0)?;
                Ok(Self::new(RequestType::parse(root.required("type")?)))
            }
            Err(err) => unquoted_type(text).map(Self::new).ok_or(err),
        }
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }
}

/// The mxml reading of `<request type=value/>`: the value runs to whitespace, `/` or `>`.
fn unquoted_type(text: &str) -> Option<RequestType> {
    let mut rest = text.trim_start();
    if let Some(r) = rest.strip_prefix("<?") {
        rest = r[r.find("?>")? + 2..].trim_start();
    }
    let rest = rest.strip_prefix("<request")?;
    let rest = rest.trim_start().strip_prefix("type=")?;
    if rest.starts_with(['"', '\'']) {
        return None;
    }
    let end = rest.find(|c: char| c.is_whitespace() || c == '/' || c == '>')?;
    let (value, tail) = rest.split_at(end);
    // Only characters a quoted attribute can carry again: no controls, no markup.
    if value.chars().any(|c| {
        c.is_control() || matches!(c, '<' | '&' | '"' | '\'' | '=' | '\u{fffe}' | '\u{ffff}')
    }) {
        return None;
    }
    let tail = tail.trim_start();
    let closed = tail.starts_with("/>") && tail[2..].trim().is_empty()
        || tail.starts_with('>') && tail[1..].trim() == "</request>";
    (closed && !value.is_empty()).then(|| RequestType::parse(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_declaration_and_a_quoted_type() {
        assert_eq!(
            Request::new(RequestType::Events).to_xml(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<request type=\"events\"/>"
        );
        assert_eq!(
            Request::new(RequestType::Other("a\"b".into())).to_xml(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<request type=\"a&quot;b\"/>"
        );
    }

    #[test]
    fn reads_quoted_and_lizard_style_unquoted_requests() {
        for kind in [
            "events",
            "counters",
            "captured",
            "configuration",
            "defaults",
            "bogus",
        ] {
            let written = Request::new(RequestType::parse(kind)).to_xml();
            assert_eq!(Request::parse(&written).unwrap().kind.as_str(), kind);
            let lizard =
                format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><request type={kind}/>");
            assert_eq!(Request::parse(&lizard).unwrap().kind.as_str(), kind);
        }
        assert_eq!(
            Request::parse("<request type=counters></request>")
                .unwrap()
                .kind,
            RequestType::Counters
        );
    }

    #[test]
    fn fuzz_unquoted_request_with_control_characters_is_refused() {
        // Found by the config_xml fuzz target: an unquoted value with control bytes was accepted, and the
        // request written back from it was not XML.
        let input =
            b"<?xv erislmon=\"1.0\" encodin'=\"UTF-8\"?><request type=events\x01\x00\x00T/>";
        assert!(matches!(
            Request::from_bytes(input),
            Err(XmlError::Syntax { .. })
        ));
        assert!(Request::parse("<request type=a<b/>").is_err());
        assert!(Request::parse("<request type=a&b/>").is_err());
    }

    #[test]
    fn malformed_requests_are_refused() {
        assert!(matches!(
            Request::parse("<request type=/>"),
            Err(XmlError::Syntax { .. })
        ));
        assert!(matches!(
            Request::parse("<request type=x"),
            Err(XmlError::Syntax { .. })
        ));
        assert!(matches!(
            Request::parse("<request type=x/> junk"),
            Err(XmlError::Syntax { .. })
        ));
        assert!(matches!(
            Request::parse("<request/>"),
            Err(XmlError::MissingAttribute {
                attribute: "type",
                ..
            })
        ));
        assert!(matches!(
            Request::parse("<session/>"),
            Err(XmlError::UnexpectedRoot { .. })
        ));
        assert!(matches!(
            Request::from_bytes(b"<request type=\"\xc3\"/>"),
            Err(XmlError::Utf8 { .. })
        ));
    }
}
