//! PKCE (RFC 7636) and `state`: the secrets one sign-in is made of. The
//! verifier is 43 characters of base64url from 32 random bytes of the system
//! (§4.1), the challenge its SHA-256 in base64url (`S256`, §4.2; the only
//! method used), `state` 16 random bytes the redirect must bring back.

use crate::net::base64;
use crate::pins::sha256;

/// The PKCE pair of one sign-in.
#[derive(Debug, Clone)]
pub(crate) struct Pkce {
    /// Sent with the code, to the token endpoint only.
    pub verifier: String,
    /// Sent in the authorization URL.
    pub challenge: String,
}

impl Pkce {
    /// A new pair from the system's random bytes.
    pub(crate) fn new() -> Result<Pkce, String> {
        Ok(Pkce::from_verifier(base64::url_safe(&random::<32>()?)))
    }

    fn from_verifier(verifier: String) -> Pkce {
        let challenge = base64::url_safe(&sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }
}

/// A new `state` value.
pub(crate) fn state() -> Result<String, String> {
    Ok(base64::url_safe(&random::<16>()?))
}

fn random<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    crate::sys::random(&mut bytes).map_err(|e| format!("the system gave no random bytes ({e})"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_of_rfc_7636_appendix_b() {
        let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".to_string());
        assert_eq!(
            pkce.challenge,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_long_enough_and_new_each_time() {
        let (a, b) = (Pkce::new().unwrap(), Pkce::new().unwrap());
        assert_eq!(a.verifier.len(), 43);
        assert!(a
            .verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a.verifier, b.verifier);
        assert_ne!(state().unwrap(), state().unwrap());
    }
}
