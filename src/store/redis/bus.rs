//! The inter-node bus: a message is published on the command connection; the listening side
//! is a pub/sub connection to one Redis node, whose messages a background task forwards into
//! a `broadcast` channel.
//!
//! The bus is one classic pub/sub channel. On a Redis Cluster a classic `PUBLISH`, sent to
//! any node, is carried by the cluster to every node, so a subscriber on any node hears
//! every message: the task listens on one node and moves to the next configured node when
//! that one goes away. Sharded pub/sub (`SPUBLISH`) would confine the one channel to the
//! shard that owns its slot and make the subscriber follow that slot through failovers and
//! migrations, for no gain: the bus carries a few messages per configuration change, which
//! the cluster's broadcast handles easily.
//!
//! The task pings its node so that a silently dead link is noticed, and reconnects with
//! backoff. Messages published while it is not listening are lost to this node, so after
//! every reconnection it hands its node a [`BusMessage::Resync`] to reload what it caches.

use std::time::Duration;

use ::redis::Client;
use ::redis::aio::PubSub;
use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::{RedisStore, bounded};
use crate::store::{Bus, StoreError, StoreResult};
use offer_wire::bus::BusMessage;

/// How many bus messages a slow subscriber may lag behind before it misses some.
const BUS_CAPACITY: usize = 1024;

/// First and longest pause between reconnection attempts.
const RECONNECT_MIN: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// How often the pub/sub connection is pinged, so a silently dead link is noticed.
const PING_EVERY: Duration = Duration::from_secs(5);

/// The running listener. Dropping it stops the task.
pub(super) struct BusListener {
    sender: broadcast::Sender<BusMessage>,
    task: JoinHandle<()>,
}

impl BusListener {
    /// Subscribes to `channel` on the first of `nodes` that answers, then keeps listening in
    /// the background. Fails with [`StoreError::Unavailable`] when no node answers.
    pub(super) async fn start(
        nodes: Vec<Client>,
        channel: String,
        timeout: Duration,
    ) -> StoreResult<Self> {
        let mut first = None;
        let mut last_error = StoreError::Unavailable("no Redis node to listen on".into());
        for (index, node) in nodes.iter().enumerate() {
            match subscribe(node, &channel, timeout).await {
                Ok(pubsub) => {
                    first = Some((index, pubsub));
                    break;
                }
                Err(err) => last_error = err,
            }
        }
        let (index, pubsub) = first.ok_or(last_error)?;
        let (sender, _) = broadcast::channel(BUS_CAPACITY);
        let task = tokio::spawn(run(
            Listening {
                nodes,
                channel,
                timeout,
                sender: sender.clone(),
            },
            index,
            pubsub,
        ));
        Ok(Self { sender, task })
    }

    /// Receives every bus message from now on.
    pub(super) fn subscribe(&self) -> broadcast::Receiver<BusMessage> {
        self.sender.subscribe()
    }
}

impl Drop for BusListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the background task works with.
struct Listening {
    nodes: Vec<Client>,
    channel: String,
    timeout: Duration,
    sender: broadcast::Sender<BusMessage>,
}

/// Opens a pub/sub connection to `node` subscribed to `channel`.
async fn subscribe(node: &Client, channel: &str, timeout: Duration) -> StoreResult<PubSub> {
    bounded(timeout, "subscribe", async {
        let mut pubsub = node.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        Ok(pubsub)
    })
    .await
}

/// The task: forwards messages, and whenever the connection is lost, reconnects with
/// backoff, trying the nodes in turn from the one after the node it lost.
async fn run(ctx: Listening, mut index: usize, first: PubSub) {
    let mut pubsub = first;
    loop {
        forward(pubsub, &ctx.sender, ctx.timeout).await;
        tracing::warn!("bus connection to Redis lost; reconnecting");
        let mut delay = RECONNECT_MIN;
        pubsub = loop {
            tokio::time::sleep(delay).await;
            index = (index + 1) % ctx.nodes.len();
            match subscribe(&ctx.nodes[index], &ctx.channel, ctx.timeout).await {
                Ok(pubsub) => break pubsub,
                Err(err) => {
                    tracing::warn!(error = %err, "bus reconnection failed");
                    delay = (delay * 2).min(RECONNECT_MAX);
                }
            }
        };
        tracing::info!("bus connection to Redis restored");
        // Messages sent while the link was down are lost: have the node reload.
        let _ = ctx.sender.send(BusMessage::Resync);
    }
}

/// Forwards bus messages until the connection drops or stops answering pings.
async fn forward(pubsub: PubSub, sender: &broadcast::Sender<BusMessage>, timeout: Duration) {
    let (mut sink, mut stream) = pubsub.split();
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            msg = stream.next() => {
                let Some(msg) = msg else { return };
                match serde_json::from_slice::<BusMessage>(msg.get_payload_bytes()) {
                    // No subscriber is fine: the message has nobody to reach.
                    Ok(message) => { let _ = sender.send(message); }
                    Err(err) => tracing::warn!(error = %err, "ignoring unreadable bus message"),
                }
            }
            _ = ping.tick() => {
                let alive = tokio::time::timeout(timeout, sink.ping::<String>()).await;
                if !matches!(alive, Ok(Ok(_))) {
                    return;
                }
            }
        }
    }
}

#[async_trait]
impl Bus for RedisStore {
    async fn publish(&self, msg: &BusMessage) -> StoreResult<()> {
        let payload = serde_json::to_vec(msg)
            .map_err(|err| StoreError::Corrupt(format!("bus message: {err}")))?;
        let mut cmd = ::redis::cmd("PUBLISH");
        cmd.arg(self.keys.bus()).arg(payload);
        self.query::<i64>("publish", &cmd).await?;
        Ok(())
    }

    fn subscribe(&self) -> broadcast::Receiver<BusMessage> {
        self.bus.subscribe()
    }
}
