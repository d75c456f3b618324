//! The replay ring: a session numbers every message it sends and keeps the recent ones, so
//! a client that reconnects with `resume_from` gets what it missed.
//!
//! The ring forgets a message when the client acknowledges it or when it is full. A resume
//! from a seq the ring no longer covers cannot be honoured: some of the missed messages are
//! gone, so the client gets none of them and must refresh its state instead.
//!
//! The ring is allocated by the first message it keeps, and given back when the client has
//! acknowledged everything in it: an idle session whose client keeps up holds none.
//!
//! A message that only makes sense on the connection it was sent on (`ready`) is numbered
//! like every other but never kept ([`Replay::number`]): replaying an old connection's
//! `ready` would tell a resumed client stale state, once per earlier connection.

use std::collections::VecDeque;

use super::message::{Outbound, Sequenced};

/// How many server messages a session keeps for a reconnecting socket's `resume_from`.
pub const REPLAY_CAPACITY: usize = 64;

/// The session's sequence numbers and its most recent messages.
#[derive(Debug, Default)]
pub(super) struct Replay {
    /// The seq of the newest message, 0 before the first.
    last_seq: u64,
    /// Every message with a seq above `floor`, oldest first, at most [`REPLAY_CAPACITY`].
    ring: VecDeque<Sequenced>,
    /// Every seq up to this one has left the ring (evicted or acknowledged).
    floor: u64,
}

impl Replay {
    /// Gives the message the next seq without keeping it: it is never replayed, and a
    /// replay skips its seq.
    pub(super) fn number(&mut self, msg: Outbound) -> Sequenced {
        self.last_seq += 1;
        Sequenced {
            seq: self.last_seq,
            msg,
        }
    }

    /// Gives the message the next seq and keeps it, evicting the oldest message when the
    /// ring is full.
    pub(super) fn sequence(&mut self, msg: Outbound) -> Sequenced {
        let item = self.number(msg);
        if self.ring.len() == REPLAY_CAPACITY
            && let Some(old) = self.ring.pop_front()
        {
            self.floor = old.seq;
        }
        self.ring.push_back(item.clone());
        item
    }

    /// The seq of the newest message (0 before the first).
    pub(super) fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Forgets the messages up to `seq`, which the client has acknowledged. A ring left
    /// empty gives its buffer back: a session whose client has read everything holds no
    /// ring until its next message.
    pub(super) fn ack(&mut self, seq: u64) {
        while self.ring.front().is_some_and(|m| m.seq <= seq) {
            if let Some(m) = self.ring.pop_front() {
                self.floor = m.seq;
            }
        }
        if self.ring.is_empty() {
            self.ring = VecDeque::new();
        }
    }

    /// Every message after `resume_from`, oldest first, when the ring still holds all of
    /// them; `None` when some are gone (the client resumes from before the ring's floor) or
    /// when the session never sent `resume_from`.
    pub(super) fn since(&self, resume_from: u64) -> Option<Vec<Sequenced>> {
        (self.floor..=self.last_seq)
            .contains(&resume_from)
            .then(|| {
                self.ring
                    .iter()
                    .filter(|m| m.seq > resume_from)
                    .cloned()
                    .collect()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::OutboundMessage;

    fn filled(n: u64) -> Replay {
        let mut replay = Replay::default();
        for i in 0..n {
            replay.sequence(OutboundMessage::new(
                serde_json::json!({ "type": "n", "i": i }),
            ));
        }
        replay
    }

    fn seqs(messages: &[Sequenced]) -> Vec<u64> {
        messages.iter().map(|m| m.seq).collect()
    }

    #[test]
    fn numbers_every_message_from_one() {
        let mut replay = Replay::default();
        assert_eq!(replay.last_seq(), 0);
        let first = replay.sequence(OutboundMessage::new(serde_json::json!({})));
        let second = replay.sequence(OutboundMessage::new(serde_json::json!({})));
        assert_eq!((first.seq, second.seq), (1, 2));
        assert_eq!(replay.last_seq(), 2);
    }

    #[test]
    fn resume_replays_what_the_client_missed() {
        let replay = filled(5);
        assert_eq!(replay.since(2).map(|m| seqs(&m)), Some(vec![3, 4, 5]));
        assert_eq!(replay.since(0).map(|m| seqs(&m)), Some(vec![1, 2, 3, 4, 5]));
        // A client that read everything resumes with nothing to replay.
        assert_eq!(replay.since(5).map(|m| seqs(&m)), Some(vec![]));
        // A seq the session never sent is not a resume point.
        assert!(replay.since(6).is_none());
    }

    #[test]
    fn a_full_ring_drops_the_oldest_and_cuts_off_older_resumes() {
        let total = REPLAY_CAPACITY as u64 + 10;
        let replay = filled(total);
        // Seqs 1 to 10 were evicted: the ring holds 11 onwards.
        let oldest_kept = total - REPLAY_CAPACITY as u64 + 1;
        let all = replay
            .since(oldest_kept - 1)
            .expect("resumable from the floor");
        assert_eq!(all.len(), REPLAY_CAPACITY);
        assert_eq!(all.first().map(|m| m.seq), Some(oldest_kept));
        assert_eq!(all.last().map(|m| m.seq), Some(total));
        // Resuming from before the floor would skip evicted messages: refused.
        assert!(replay.since(oldest_kept - 2).is_none());
        assert!(replay.since(0).is_none());
    }

    #[test]
    fn a_numbered_message_is_never_replayed() {
        let mut replay = filled(2);
        let kept_out = replay.number(OutboundMessage::new(serde_json::json!({})));
        assert_eq!(kept_out.seq, 3);
        let next = replay.sequence(OutboundMessage::new(serde_json::json!({})));
        assert_eq!(next.seq, 4);
        // Every resume point skips seq 3, even one from before it.
        assert_eq!(replay.since(0).map(|m| seqs(&m)), Some(vec![1, 2, 4]));
        assert_eq!(replay.since(3).map(|m| seqs(&m)), Some(vec![4]));
    }

    #[test]
    fn the_ring_holds_memory_only_while_it_holds_messages() {
        let mut replay = Replay::default();
        assert_eq!(
            replay.ring.capacity(),
            0,
            "nothing before the first message"
        );
        // A numbered message (`ready`) is never kept, so it allocates nothing either.
        replay.number(OutboundMessage::new(serde_json::json!({})));
        assert_eq!(replay.ring.capacity(), 0);
        for _ in 0..3 {
            replay.sequence(OutboundMessage::new(serde_json::json!({})));
        }
        assert!(replay.ring.capacity() >= 3);
        // Acknowledging part of it keeps the rest, and the buffer.
        replay.ack(2);
        assert_eq!(replay.since(2).map(|m| seqs(&m)), Some(vec![3, 4]));
        // Acknowledging everything gives the buffer back; numbering and resuming go on.
        replay.ack(4);
        assert_eq!(replay.ring.capacity(), 0);
        assert_eq!(replay.since(4).map(|m| seqs(&m)), Some(vec![]));
        let next = replay.sequence(OutboundMessage::new(serde_json::json!({})));
        assert_eq!(next.seq, 5);
        assert_eq!(replay.since(4).map(|m| seqs(&m)), Some(vec![5]));
    }

    #[test]
    fn ack_forgets_acknowledged_messages() {
        let mut replay = filled(5);
        replay.ack(3);
        assert_eq!(replay.since(3).map(|m| seqs(&m)), Some(vec![4, 5]));
        // Acknowledged messages cannot be replayed any more.
        assert!(replay.since(2).is_none());
        // An old or repeated acknowledgement changes nothing.
        replay.ack(1);
        assert_eq!(replay.since(3).map(|m| seqs(&m)), Some(vec![4, 5]));
        // New messages keep their numbers after an ack.
        let next = replay.sequence(OutboundMessage::new(serde_json::json!({})));
        assert_eq!(next.seq, 6);
    }
}
