//! JSON-RPC batches, which only the 2025-03-26 revision has ("MUST support
//! receiving", MCP 2025-03-26, basic, "Batching"; removed in 2025-06-18).
//!
//! A batch's requests are dispatched like any others, and their answers may
//! come from any thread. The `Outbox` holds each answer back while its batch
//! is incomplete, then writes the whole batch as one array, in request order.
//! No IO here.

use crate::protocol::jsonrpc::RequestId;

/// One place in a batch's answer array.
pub(crate) enum Slot {
    /// Waiting for the response to this request.
    Expect(RequestId),
    /// Answered already (an invalid element's error), without its `\n`.
    Ready(Vec<u8>),
}

/// One answer of an open batch: the request it waits for (none for a
/// pre-filled error) and the response line once it is there.
type Answer = (Option<RequestId>, Option<Vec<u8>>);

#[derive(Default)]
pub(crate) struct Batches {
    open: Vec<Vec<Answer>>,
}

impl Batches {
    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Starts a batch; returns its array line if nothing is left to wait for.
    pub(crate) fn open(&mut self, slots: Vec<Slot>) -> Option<Vec<u8>> {
        let batch = slots
            .into_iter()
            .map(|slot| match slot {
                Slot::Expect(id) => (Some(id), None),
                Slot::Ready(bytes) => (None, Some(bytes)),
            })
            .collect();
        self.open.push(batch);
        self.take_complete()
    }

    /// Keeps `response` (a line without `\n`) if a batch waits for `id`.
    /// `None`: not part of a batch, write it as it is; `Some(line)`: part of a
    /// batch, and `line` is the finished batch to write, if it is complete.
    pub(crate) fn capture(&mut self, id: &RequestId, response: &[u8]) -> Option<Option<Vec<u8>>> {
        let slot = self
            .open
            .iter_mut()
            .flat_map(|batch| batch.iter_mut())
            .find(|(want, got)| got.is_none() && want.as_ref() == Some(id))?;
        slot.1 = Some(response.to_vec());
        Some(self.take_complete())
    }

    /// A request of a batch that will get no response (the host cancelled it).
    pub(crate) fn forget(&mut self, id: &RequestId) -> Option<Vec<u8>> {
        for batch in &mut self.open {
            if let Some(i) = batch
                .iter()
                .position(|(want, got)| got.is_none() && want.as_ref() == Some(id))
            {
                batch.remove(i);
                break;
            }
        }
        self.take_complete()
    }

    fn take_complete(&mut self) -> Option<Vec<u8>> {
        let i = self
            .open
            .iter()
            .position(|b| b.iter().all(|(_, got)| got.is_some()))?;
        let batch = self.open.remove(i);
        if batch.is_empty() {
            return None; // only notifications, or every request was cancelled
        }
        let mut line = vec![b'['];
        for (n, (_, response)) in batch.into_iter().enumerate() {
            if n > 0 {
                line.push(b',');
            }
            line.extend(response.unwrap_or_default());
        }
        line.extend_from_slice(b"]\n");
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_held_until_the_batch_is_complete_and_kept_in_order() {
        let mut batches = Batches::default();
        let (a, b) = (RequestId::Int(1), RequestId::Int(2));
        let ready = Slot::Ready(b"{\"e\":0}".to_vec());
        assert_eq!(
            batches.open(vec![
                Slot::Expect(a.clone()),
                ready,
                Slot::Expect(b.clone())
            ]),
            None
        );
        assert_eq!(
            batches.capture(&RequestId::Int(3), b"x"),
            None,
            "not in a batch"
        );
        assert_eq!(batches.capture(&b, b"{\"b\":2}"), Some(None));
        assert_eq!(
            batches.capture(&a, b"{\"a\":1}"),
            Some(Some(b"[{\"a\":1},{\"e\":0},{\"b\":2}]\n".to_vec()))
        );
        assert!(batches.is_empty());
    }

    #[test]
    fn cancelled_and_notification_only_batches() {
        let mut batches = Batches::default();
        assert_eq!(batches.open(vec![]), None);
        assert!(batches.is_empty());
        let id = RequestId::Int(7);
        batches.open(vec![
            Slot::Expect(id.clone()),
            Slot::Expect(RequestId::Int(8)),
        ]);
        assert_eq!(batches.forget(&id), None);
        assert_eq!(
            batches.capture(&RequestId::Int(8), b"{}"),
            Some(Some(b"[{}]\n".to_vec()))
        );
    }
}
