//! What a message shows of a response body a server sent with an error:
//! an HTML page (a proxy's, a load balancer's, a sign-in page) by its
//! `<title>`, or its first heading, or else its text without the markup,
//! never its markup; any other body as it came. Everything goes through
//! `text::shown` (one line, escaped, capped). No IO here.

use super::text::shown;

/// How much of a page is searched for its title or heading.
const SEARCHED: usize = 64 * 1024;

/// `body` fit to show in at most about `limit` characters; `content_type`:
/// the response's `Content-Type`, empty when it had none.
pub(crate) fn shown_body(content_type: &str, body: &[u8], limit: usize) -> String {
    let end = body.len().min(SEARCHED);
    let text = String::from_utf8_lossy(&body[..end]);
    if !is_html(content_type, &text) {
        return super::text::shown_bytes(body, limit);
    }
    let text = unseen(&text);
    let lower = text.to_ascii_lowercase();
    let inner = |tag: &str| element(&text, &lower, tag).filter(|t| !t.is_empty());
    if let Some(title) = inner("title") {
        return format!("an HTML page titled \"{}\"", shown(&title, limit));
    }
    let heading = ["h1", "h2", "h3", "h4", "h5", "h6"]
        .iter()
        .filter_map(|tag| lower.find(&format!("<{tag}")).map(|at| (at, *tag)))
        .min();
    if let Some(heading) = heading.and_then(|(_, tag)| inner(tag)) {
        return format!("an HTML page headed \"{}\"", shown(&heading, limit));
    }
    let words = plain(&text, &lower, 0, text.len());
    match shown(&words, limit) {
        excerpt if excerpt.is_empty() => "an HTML page".to_string(),
        excerpt => format!("an HTML page: {excerpt}"),
    }
}

/// Whether a body is HTML: said by its type, or it opens as a page does.
fn is_html(content_type: &str, text: &str) -> bool {
    let media = content_type.trim_start().to_ascii_lowercase();
    let start = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let opens = |prefix: &str| {
        start
            .get(..prefix.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(prefix))
    };
    media.starts_with("text/html") || opens("<!doctype html") || opens("<html")
}

/// `text` with what a browser does not show as text (comments, scripts,
/// styles) taken out.
fn unseen(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some((start, open)) = ["<!--", "<script", "<style"]
        .iter()
        .filter_map(|open| lower[at..].find(open).map(|i| (at + i, *open)))
        .min()
    {
        let closing = match open {
            "<!--" => "-->",
            "<script" => "</script>",
            _ => "</style>",
        };
        out.push_str(&text[at..start]);
        out.push(' ');
        at = lower[start..]
            .find(closing)
            .map_or(text.len(), |i| start + i + closing.len());
    }
    out.push_str(&text[at..]);
    out
}

/// The text of the first `tag` element of `text` (`lower`: the same, in
/// ASCII lower case, so that every index is the same), markup removed.
fn element(text: &str, lower: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}");
    let mut from = 0;
    let start = loop {
        let at = from + lower[from..].find(&open)?;
        let after = at + open.len();
        // `<h1>` or `<h1 class=..>`, not `<h1x>` or `<titles>`.
        if lower[after..].starts_with(['>', ' ', '\t', '\r', '\n', '/']) {
            break after + lower[after..].find('>')? + 1;
        }
        from = after;
    };
    let end = lower[start..]
        .find(&format!("</{tag}"))
        .map_or(lower.len(), |at| start + at);
    Some(plain(text, lower, start, end).trim().to_string())
}

/// `text[start..end]` without its tags, the common character references
/// decoded.
fn plain(text: &str, lower: &str, start: usize, end: usize) -> String {
    let mut out = String::new();
    let mut at = start;
    while at < end {
        let rest = &lower[at..end];
        let Some(lt) = rest.find('<') else {
            out.push_str(&text[at..end]);
            break;
        };
        out.push_str(&text[at..at + lt]);
        at += lt;
        out.push(' ');
        at = lower[at..end].find('>').map_or(end, |i| at + i + 1);
    }
    decode(&out)
}

/// The character references pages use most; others stay as written.
fn decode(text: &str) -> String {
    text.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_shown_by_its_title() {
        let page = b"<!DOCTYPE html>\n<html><head><meta charset=utf-8>\n<TITLE>502 Bad\n Gateway &amp; co</TITLE>\n<style>h1{color:red}</style></head>\n<body><h1>Bad Gateway</h1><p>nginx</p></body></html>";
        assert_eq!(
            shown_body("", page, 200),
            "an HTML page titled \"502 Bad Gateway & co\""
        );
        assert_eq!(
            shown_body(
                "text/html; charset=utf-8",
                b"<h2 class=x>Not <b>found</b></h2><h1>Later</h1>",
                200
            ),
            "an HTML page headed \"Not found\""
        );
        assert_eq!(
            shown_body("TEXT/HTML", b"<html><script>var x = '<h1>';</script><body><p>Access\r\n denied</p><!-- <title>no</title> --></body></html>", 200),
            "an HTML page: Access denied"
        );
        assert_eq!(shown_body("", b"<html></html>", 200), "an HTML page");
        // The title is still text from the network: escaped and capped.
        assert_eq!(
            shown_body("", b"<html><title>evil\x1b[2J</title>", 200),
            "an HTML page titled \"evil\\x1b[2J\""
        );
        assert_eq!(
            shown_body(
                "",
                format!("<html><title>{}</title>", "x".repeat(300)).as_bytes(),
                10
            ),
            "an HTML page titled \"xxxxxxxxxx ...\""
        );
        // `<titles>` is no title; an unclosed one runs to the end.
        assert_eq!(
            shown_body("", b"<html><titles>a</titles><title>b", 200),
            "an HTML page titled \"b\""
        );
    }

    #[test]
    fn other_bodies_are_shown_as_they_came() {
        assert_eq!(
            shown_body("application/json", br#"{"error": "<b>x</b>"}"#, 200),
            r#"{"error": "<b>x</b>"}"#
        );
        assert_eq!(
            shown_body("text/plain", b"<h1>Bad\r\n gateway</h1>", 200),
            "<h1>Bad gateway</h1>"
        );
        assert_eq!(shown_body("", &[b'x'; 300], 200).len(), 204);
    }
}
