//! ratelab-netsim: a discrete-event network simulator in which every router
//! is the compiled router program in ratelab's engine (the same table
//! entries the controller installs) and every host runs ratelab-stack's
//! state machines. Time is integer nanoseconds, owned by the event queue;
//! nothing reads a clock, and the same scenario and seed give byte-identical
//! results. `README.md` next to this crate describes the design and the
//! scenario format.
//!
//! ```no_run
//! use ratelab_netsim::{Scenario, Simulator};
//! let text = std::fs::read_to_string("scenario.json").unwrap();
//! let scenario = Scenario::from_json(&text, "scenario.json").unwrap();
//! let program = std::fs::read_to_string("build/router.json").unwrap();
//! let results = Simulator::new(&scenario, &program).unwrap().run();
//! print!("{}", results.flows_csv());
//! ```

pub mod events;
pub mod examples;
mod flows;
pub mod frame;
mod host;
mod jitter;
pub mod ping;
pub mod results;
mod router;
pub mod scenario;
pub mod seeds;
mod sim;
mod stream;
mod topology;

pub use events::{EventQueue, Nanos};
pub use flows::{DEFAULT_MESSAGE_SIZE, DEFAULT_UDP_SIZE, RECEIVER_PORT, SENDER_PORT};
pub use results::Results;
pub use scenario::{Scenario, ScenarioError};
pub use sim::{Simulator, GATEWAY_MAC};
pub use topology::DEFAULT_HOST_QUEUE;
