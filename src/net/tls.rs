//! TLS for `https` URLs: rustls with the ring provider installed explicitly,
//! certificates verified against the operating system's trust store
//! (rustls-platform-verifier: corporate roots installed on the machine work)
//! plus the PEM certificates `SSL_CERT_FILE` names. One client config
//! (`Tls`) per `Agent`, made at its first `https` connection.
//!
//! A refused certificate is named in the error: rustls keeps the server's
//! certificates only once they are verified, so a thin wrapper around the
//! verifier keeps what the server presented, filed under the thread doing
//! the handshake (rustls verifies on that thread) until the handshake ends,
//! and the error reads its subject, names and issuer (`der.rs`) and why it
//! was refused. No state of its own: the `Tls` value holds it.

use super::der;
use super::error::NetError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct};
use std::collections::HashMap;
use std::io;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

/// A client config and what its verifier was shown: cheap to clone, one
/// per `Agent` (a fresh one shares no resumption or certificate with it).
#[derive(Clone)]
pub(crate) struct Tls {
    config: Arc<ClientConfig>,
    presented: Arc<Presented>,
}

/// The end-entity certificate each thread's handshake under way was
/// presented, until that handshake ends.
type Presented = Mutex<HashMap<ThreadId, Vec<u8>>>;

impl Tls {
    /// The client config with `SSL_CERT_FILE`'s certificates as they are now.
    pub(crate) fn system() -> Result<Tls, String> {
        Tls::trusting(extra_roots())
    }

    /// A client config trusting the system's roots and `extra`.
    pub(crate) fn trusting(extra: Vec<CertificateDer<'static>>) -> Result<Tls, String> {
        let presented = Arc::new(Presented::default());
        let config = client_config(extra, Arc::clone(&presented))?;
        Ok(Tls {
            config: Arc::new(config),
            presented,
        })
    }
}

/// The certificates of the PEM file `SSL_CERT_FILE` names; one that cannot
/// be read is logged and left out (the system's roots still work).
fn extra_roots() -> Vec<CertificateDer<'static>> {
    let Some(path) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    let shown = std::path::Path::new(&path).display().to_string();
    match CertificateDer::pem_file_iter(&path) {
        Ok(certs) => {
            let mut roots = Vec::new();
            for cert in certs {
                match cert {
                    Ok(cert) => roots.push(cert),
                    Err(e) => {
                        log::warn!("SSL_CERT_FILE '{shown}': a certificate cannot be read: {e}")
                    }
                }
            }
            roots
        }
        Err(e) => {
            log::warn!("SSL_CERT_FILE '{shown}' cannot be read: {e}");
            Vec::new()
        }
    }
}

/// A client config trusting the system's roots and `extra`. Where the
/// system cannot add roots to its own (Wine's crypt32 has no chain engine
/// with extra roots), it trusts the system's alone, and says so.
fn client_config(
    extra: Vec<CertificateDer<'static>>,
    presented: Arc<Presented>,
) -> Result<ClientConfig, String> {
    use rustls_platform_verifier::Verifier;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let system = |provider: &Arc<rustls::crypto::CryptoProvider>| {
        Verifier::new(Arc::clone(provider))
            .map_err(|e| format!("the TLS certificate verifier cannot be set up: {e}"))
    };
    let verifier = if extra.is_empty() {
        system(&provider)?
    } else {
        match Verifier::new_with_extra_roots(extra, Arc::clone(&provider)) {
            Ok(verifier) => verifier,
            Err(e) => {
                log::warn!("the certificates of SSL_CERT_FILE cannot be added ({e}): only the system's roots are trusted");
                system(&provider)?
            }
        }
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS cannot be set up: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Recording(verifier, presented)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Runs the handshake with `host` over `sock` (blocking, within the
/// socket's timeouts), with `tls`'s config.
pub(crate) fn handshake(
    sock: &mut TcpStream,
    host: &str,
    tls: &Tls,
    limit: Duration,
) -> Result<ClientConnection, NetError> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| NetError::Tls(format!("'{host}' cannot be a TLS server name")))?;
    let mut conn = ClientConnection::new(Arc::clone(&tls.config), name)
        .map_err(|e| NetError::Tls(format!("TLS cannot start: {e}")))?;
    let seen = Seen(&tls.presented);
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(sock) {
            return Err(failed(e, limit, seen.take()));
        }
    }
    Ok(conn)
}

/// What this thread's handshake was presented, forgotten when it ends.
struct Seen<'a>(&'a Presented);

impl Seen<'_> {
    fn take(&self) -> Option<Vec<u8>> {
        crate::lock(self.0).remove(&std::thread::current().id())
    }
}

impl Drop for Seen<'_> {
    fn drop(&mut self) {
        self.take();
    }
}

/// What a failed handshake's IO error says; `presented`: the certificate
/// the server presented, if it got so far.
fn failed(e: io::Error, limit: Duration, presented: Option<Vec<u8>>) -> NetError {
    let rustls_error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .cloned();
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(why)) => {
            let names = presented.map(|cert| der::names(&cert)).unwrap_or_default();
            NetError::Tls(format!(
                "its TLS certificate {} was refused: {}",
                names.describe(),
                refusal(&why)
            ))
        }
        Some(rustls::Error::InvalidMessage(_)) | Some(rustls::Error::InappropriateMessage { .. }) => {
            NetError::Tls(
                "the TLS handshake failed: the server does not answer in TLS (is the URL http:// rather than https://?)"
                    .to_string(),
            )
        }
        Some(other) => NetError::Tls(format!("the TLS handshake failed: {other}")),
        None => match NetError::reading(e, limit) {
            NetError::Ended => {
                NetError::Tls("the server closed the connection during the TLS handshake".to_string())
            }
            other => other,
        },
    }
}

/// Why a certificate was refused, in words.
fn refusal(why: &CertificateError) -> String {
    match why {
        CertificateError::UnknownIssuer => "it is not signed by an authority the workbench trusts (none in the system's trust store or in SSL_CERT_FILE)".to_string(),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => "it has expired".to_string(),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => "it is not valid yet (is the clock right?)".to_string(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => "it is not valid for the host name of the URL".to_string(),
        CertificateError::Revoked => "it has been revoked".to_string(),
        CertificateError::BadSignature => "its signature is invalid".to_string(),
        CertificateError::BadEncoding => "it cannot be read".to_string(),
        other => format!("{other:?}"),
    }
}

/// The platform verifier, keeping the end-entity certificate it is shown
/// for the thread that asked.
struct Recording(rustls_platform_verifier::Verifier, Arc<Presented>);

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Recording").field(&self.0).finish()
    }
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        crate::lock(&self.1).insert(std::thread::current().id(), end_entity.to_vec());
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::net::test_server::{tls_dir, Server};

    fn test_ca() -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_file_iter(tls_dir().join("ca.pem"))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn handshake_with(
        server: &Server,
        host: &str,
        roots: Vec<CertificateDer<'static>>,
    ) -> Result<ClientConnection, NetError> {
        let mut sock = TcpStream::connect(server.addr).unwrap();
        let limit = Duration::from_secs(10);
        sock.set_read_timeout(Some(limit)).unwrap();
        let tls = Tls::trusting(roots).unwrap();
        handshake(&mut sock, host, &tls, limit)
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "Wine's crypt32 has no chain engine with extra roots"
    )]
    fn the_test_ca_makes_the_leaf_trusted_and_without_it_the_refusal_names_the_certificate() {
        let server = Server::start_tls(|_, reply| reply.send(200, &[], b"ok"));
        assert!(handshake_with(&server, "127.0.0.1", test_ca()).is_ok());
        assert!(handshake_with(&server, "localhost", test_ca()).is_ok());
        let refused = handshake_with(&server, "127.0.0.1", Vec::new())
            .err()
            .unwrap()
            .to_string();
        assert!(
            refused.contains("its TLS certificate CN=localhost (names localhost, 127.0.0.1, ::1; issued by CN=mcp-workbench test CA) was refused"),
            "{refused}"
        );
        assert!(
            refused.contains("not signed by an authority the workbench trusts"),
            "{refused}"
        );
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "Wine's crypt32 has no chain engine with extra roots"
    )]
    fn a_name_the_certificate_does_not_cover_is_refused_as_such() {
        let server = Server::start_tls(|_, reply| reply.send(200, &[], b"ok"));
        // The certificate covers 127.0.0.1 and ::1, not 127.0.0.2.
        let refused = handshake_with(&server, "127.0.0.2", test_ca())
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("not valid for the host name"), "{refused}");
    }

    #[test]
    fn a_server_that_does_not_speak_tls_is_told_apart() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut sock, _) = listener.accept().unwrap();
            let _ = std::io::Write::write_all(&mut sock, b"HTTP/1.1 400 Bad Request\r\n\r\n");
            std::thread::sleep(Duration::from_secs(1));
        });
        let mut sock = TcpStream::connect(addr).unwrap();
        let tls = Tls::trusting(Vec::new()).unwrap();
        let refused = handshake(&mut sock, "127.0.0.1", &tls, Duration::from_secs(10))
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("does not answer in TLS"), "{refused}");
    }
}
