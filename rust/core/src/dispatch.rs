//! Native dispatchers on counting platforms: the [`View`] a dispatcher sees, the
//! [`Dispatcher`] trait, the queue orderings ([`Order`]), the dispatcher parameters
//! ([`Params`]) and the registry ([`make_dispatcher_with`]). The list dispatchers
//! `fifo`, `sjf` and `ljf` (`dispatchlab.dispatch.priority`) are in [`crate::list`],
//! `easy` and `conservative` (`dispatchlab.dispatch.backfill`) in [`crate::backfill`].
//!
//! **Node-level runs** (a platform of nodes x resources, `is_node_level` in Python):
//! the engine calls [`Dispatcher::start_nodes`] once with the node facts, then at each
//! pass [`Dispatcher::dispatch_nodes`] with the same [`View`] plus a [`NodeView`] (the
//! free matrix, the per-unit requests, the running jobs' allocations); a decision is a
//! [`Placement`] (a job row and its [`Allocation`]). Counting dispatchers need not
//! implement either: [`make_node_dispatcher`] builds only the dispatchers that do.

use crate::alloc::{make_allocator, Allocation, NodeMatrix, Nodes};
use crate::backfill::{make_backfill, Backfill};
use crate::backfill_nodes::NodeBackfill;
use crate::list::{NodeList, Sorted};
use crate::state::RunningSet;
use crate::Error;

/// What a dispatcher sees at a pass (read-only).
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// the current time (s)
    pub now: i64,
    /// cores free now
    pub free_cores: i64,
    /// the waiting job rows, in queue order
    pub queue: &'a [u32],
    /// cores per job row
    pub units: &'a [i64],
    /// each job row's estimate at submission (s)
    pub estimate: &'a [i64],
    /// the running jobs, in planned-end order (raw planned ends: see
    /// [`View::releases`])
    pub running: &'a RunningSet,
    /// how many completions and expiry passes (running jobs given a new estimate or
    /// counted as ending now) the run has had: equal at two passes when only
    /// submissions happened between them (and the earlier pass's own starts)
    pub changes: u64,
}

impl View<'_> {
    /// The running jobs' `(planned end, cores)` in planned-end order, a planned end
    /// already past counting as now (the Python view's `running.est_end`).
    pub fn releases(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let now = self.now;
        self.running
            .entries()
            .iter()
            .map(move |e| (e.est_end.max(now), e.units))
    }
}

/// What a dispatcher that keeps state between passes may read beside the [`View`]
/// (the Python `View`'s `changed`, `start_time` and `woken`; see
/// [`Dispatcher::dispatch_in`]).
#[derive(Debug, Clone, Copy)]
pub struct PassContext<'a> {
    /// each job row's start time (s); -1 for a job not started
    pub start: &'a [i64],
    /// the jobs queued since this dispatcher's previous call, in event order
    pub submitted: &'a [u32],
    /// the jobs that ended (completed or killed) since its previous call, in event order
    pub completed: &'a [u32],
    /// the running jobs given a new estimate since its previous call (expiry)
    pub reestimated: &'a [u32],
    /// whether a wake-up it asked for ([`PassRequests::wake`]) fired at this pass's time
    pub woken: bool,
}

/// What a dispatcher asks of the engine at a pass beside the jobs it starts (see
/// [`Dispatcher::dispatch_in`]); the engine empties it before each call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassRequests {
    /// waiting job rows to remove from the queue without running them (status
    /// rejected; each one counts as a change, [`View::changes`])
    pub reject: Vec<u32>,
    /// times (> now) at which to make a pass even if no job event happens then
    pub wake: Vec<i64>,
    /// times of wake-ups asked for earlier and not fired to withdraw (one each)
    pub withdraw: Vec<i64>,
    /// stop the run with this message (the dispatcher failed; the caller holds why)
    pub stop: Option<String>,
}

impl PassRequests {
    /// Whether nothing is asked.
    pub fn is_empty(&self) -> bool {
        self.reject.is_empty()
            && self.wake.is_empty()
            && self.withdraw.is_empty()
            && self.stop.is_none()
    }

    pub fn clear(&mut self) {
        self.reject.clear();
        self.wake.clear();
        self.withdraw.clear();
        self.stop = None;
    }
}

/// What a dispatcher sees of the nodes at a node-level pass (read-only), beside the
/// [`View`] (whose `free_cores` is then the free `core` column's sum, and whose
/// `running` holds each running job's units).
#[derive(Debug, Clone, Copy)]
pub struct NodeView<'a> {
    /// the free resources now (nodes x resources, the platform's resource order)
    pub free: &'a NodeMatrix,
    /// the node facts (capacity matrix, weights, efficiency ranks)
    pub nodes: &'a Nodes,
    /// every job row's per-unit request (jobs x resources)
    pub requests: &'a NodeMatrix,
    /// by job row: the allocation of every job started so far (empty for the others;
    /// a running job's is where it runs now)
    pub allocations: &'a [Allocation],
}

/// A start on a node-level platform: job row `job` on `allocation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub job: u32,
    pub allocation: Allocation,
}

/// A dispatcher: at each pass, the job rows to start now, in order (on node-level
/// platforms, with their allocations: [`Dispatcher::dispatch_nodes`]).
pub trait Dispatcher: Send {
    /// The dispatcher's registered name.
    fn name(&self) -> &'static str;

    /// Called once by the engine before the first pass with every job row's estimate
    /// at submission (the native predictors' estimates are known in advance; a
    /// rejected job's too). Default: nothing.
    fn start(&mut self, estimates: &[i64]) {
        let _ = estimates;
    }

    /// Append to `out` the rows of the waiting jobs to start now (they must fit the
    /// free cores together). Called only when the queue is not empty.
    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>);

    /// What the engine calls at a pass: [`Dispatcher::dispatch`] with what happened
    /// since the previous call (`context`) and the requests beside the starts
    /// (`requests`, empty on entry: rejections, wake-ups, a stop). The default
    /// ignores both (every native dispatcher); a dispatcher written in Python
    /// (the binding's adapter) uses them.
    fn dispatch_in(
        &mut self,
        view: &View<'_>,
        context: &PassContext<'_>,
        out: &mut Vec<u32>,
        requests: &mut PassRequests,
    ) {
        let _ = (context, requests);
        self.dispatch(view, out);
    }

    /// Whether to call the dispatcher at a pass whose queue is empty (no wake-up it
    /// asked for fired then); read at every such pass. Default: false (no native
    /// dispatcher has anything to do without waiting jobs).
    fn call_on_empty_queue(&mut self) -> bool {
        false
    }

    /// Node-level runs: called once by the engine after [`Dispatcher::start`], before
    /// the first pass, with the platform's node facts (set up the allocator here, as
    /// the Python dispatchers call `start_allocator`). Default: nothing.
    fn start_nodes(&mut self, nodes: &Nodes) {
        let _ = nodes;
    }

    /// Node-level runs: append to `out` the waiting jobs to start now with their
    /// allocations, in order (they must fit the free matrix together: the engine
    /// checks each as the Python engine does). Called only when the queue is not
    /// empty. The default panics: only the dispatchers [`make_node_dispatcher`] builds
    /// place jobs on nodes.
    fn dispatch_nodes(&mut self, view: &View<'_>, nodes: &NodeView<'_>, out: &mut Vec<Placement>) {
        let _ = (view, nodes, out);
        panic!("{} cannot place jobs on nodes", self.name());
    }

    /// What the engine calls at a node-level pass: [`Dispatcher::dispatch_nodes`] with
    /// what happened since the previous call and the requests beside the placements
    /// (as [`Dispatcher::dispatch_in`]). The default ignores both.
    fn dispatch_nodes_in(
        &mut self,
        view: &View<'_>,
        nodes: &NodeView<'_>,
        context: &PassContext<'_>,
        out: &mut Vec<Placement>,
        requests: &mut PassRequests,
    ) {
        let _ = (context, requests);
        self.dispatch_nodes(view, nodes, out);
    }
}

/// Strict first-come-first-served: jobs start in queue order while they fit; the
/// first that does not fit blocks the queue.
#[derive(Debug, Default, Clone)]
pub struct Fifo;

impl Dispatcher for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        let mut free = view.free_cores;
        for &job in view.queue {
            let u = view.units[job as usize];
            if u > free {
                return;
            }
            free -= u;
            out.push(job);
        }
    }
}

/// A queue ordering: the order in which a dispatcher tries waiting jobs. Every
/// ordering is total: ties go to the job row (queue order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// queue order (submit time, then row: ascending row)
    Fifo,
    /// ascending estimate at submission, ties by queue order (`sjf`)
    Sjf,
    /// ascending per-job rank (indexed by job row), ties by queue order: a static
    /// ordering computed by the caller (the rank of each job in the ordering's order
    /// over all jobs)
    Rank(Vec<i64>),
}

impl Order {
    /// Sort `jobs` (job rows) into this order; `estimate` is indexed by job row.
    pub fn sort(&self, jobs: &mut [u32], estimate: &[i64]) {
        match self {
            Order::Fifo => jobs.sort_unstable(),
            Order::Sjf => jobs.sort_unstable_by_key(|&j| (estimate[j as usize], j)),
            Order::Rank(rank) => jobs.sort_unstable_by_key(|&j| (rank[j as usize], j)),
        }
    }

    /// Whether this is queue order.
    pub fn is_fifo(&self) -> bool {
        *self == Order::Fifo
    }
}

/// A dispatcher parameter that names an ordering (`order` and `priority` of
/// `easy` / `conservative`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderParam {
    /// an ordering (`"fifo"` or `"fcfs"`, `"sjf"`, or a rank array)
    Order(Order),
    /// `order="priority"`: the backfill scan follows the priority
    Priority,
}

impl OrderParam {
    /// `"fifo"` (or `"fcfs"`), `"sjf"` or `"priority"` (`priority_ok`: only for `order`).
    pub fn parse(field: &'static str, name: &str, priority_ok: bool) -> Result<OrderParam, Error> {
        match name {
            "fifo" | "fcfs" => Ok(OrderParam::Order(Order::Fifo)),
            "sjf" => Ok(OrderParam::Order(Order::Sjf)),
            "priority" if priority_ok => Ok(OrderParam::Priority),
            _ => Err(Error::Input {
                field,
                row: None,
                message: format!(
                    "no native ordering {name:?} (the native ones: fifo, sjf{}, or a rank \
                     array)",
                    if priority_ok { ", priority" } else { "" }
                ),
            }),
        }
    }
}

/// The parameters of a native dispatcher (None: the dispatcher's default). Which
/// dispatcher takes which, with the semantics of its Python class:
///
/// * `sjf`, `ljf`: `skip` (walk past jobs that do not fit; default strict);
/// * `easy`: `order` (the backfill scan order, default fifo; `Priority`: the
///   priority's), `reservations` (K >= 1, default 1), `priority` (a static queue
///   priority, default fifo) and `scope` (`"backfill"`: the priority orders the
///   backfill scan; `"queue"`: the queue is sorted by it, so the head and the
///   reservations follow it);
/// * `conservative`: `order`;
/// * `fifo`: none;
///
/// and every one of them `allocator` (the registered name of a native allocator,
/// [`crate::alloc::make_allocator`]; default `first-fit`), which places the jobs on
/// node-level platforms and changes nothing on counting ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    pub skip: Option<bool>,
    pub order: Option<OrderParam>,
    pub reservations: Option<i64>,
    pub priority: Option<Order>,
    pub scope: Option<String>,
    pub allocator: Option<String>,
}

impl Params {
    /// The names of the parameters given.
    fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (name, set) in [
            ("skip", self.skip.is_some()),
            ("order", self.order.is_some()),
            ("reservations", self.reservations.is_some()),
            ("priority", self.priority.is_some()),
            ("scope", self.scope.is_some()),
            ("allocator", self.allocator.is_some()),
        ] {
            if set {
                out.push(name);
            }
        }
        out
    }

    /// An input error unless every parameter given is one of `known`.
    fn only(&self, dispatcher: &str, known: &[&'static str]) -> Result<(), Error> {
        match self.given().into_iter().find(|p| !known.contains(p)) {
            None => Ok(()),
            Some(p) => Err(Error::Input {
                field: p,
                row: None,
                message: format!(
                    "{dispatcher} has no parameter {p} (its parameters: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            }),
        }
    }
}

/// The native dispatchers by registered name with their default parameters.
pub fn make_dispatcher(name: &str) -> Result<Box<dyn Dispatcher>, Error> {
    make_dispatcher_with(name, &Params::default(), None)
}

/// The native dispatchers by registered name: `fifo`, `sjf`, `ljf`, `easy`,
/// `conservative`, with `params` (see [`Params`]; checked as the Python classes check
/// them). `n_jobs`, when given, is the length every rank array must have.
pub fn make_dispatcher_with(
    name: &str,
    params: &Params,
    n_jobs: Option<usize>,
) -> Result<Box<dyn Dispatcher>, Error> {
    if let Some(n) = n_jobs {
        let order_rank = match &params.order {
            Some(OrderParam::Order(Order::Rank(r))) => Some(r),
            _ => None,
        };
        let priority_rank = match &params.priority {
            Some(Order::Rank(r)) => Some(r),
            _ => None,
        };
        for (field, rank) in [("order", order_rank), ("priority", priority_rank)] {
            if let Some(rank) = rank.filter(|r| r.len() != n) {
                return Err(Error::Input {
                    field,
                    row: None,
                    message: format!("has {} ranks for {n} jobs", rank.len()),
                });
            }
        }
    }
    match name {
        "fifo" => {
            params.only(name, &["allocator"])?;
            Ok(Box::new(Fifo))
        }
        "sjf" | "ljf" => {
            params.only(name, &["skip", "allocator"])?;
            let skip = params.skip.unwrap_or(false);
            Ok(Box::new(if name == "sjf" {
                Sorted::sjf(skip)
            } else {
                Sorted::ljf(skip)
            }))
        }
        "easy" => {
            params.only(
                name,
                &["order", "reservations", "priority", "scope", "allocator"],
            )?;
            let k = params.reservations.unwrap_or(1);
            if k < 1 {
                return Err(Error::Input {
                    field: "reservations",
                    row: None,
                    message: format!("reservations must be an integer >= 1, got {k}"),
                });
            }
            let k = usize::try_from(k).unwrap_or(usize::MAX);
            Ok(Box::new(Backfill::new(
                "easy",
                Some(k),
                params
                    .order
                    .clone()
                    .unwrap_or(OrderParam::Order(Order::Fifo)),
                params.priority.clone().unwrap_or(Order::Fifo),
                params.scope.as_deref().unwrap_or("backfill"),
            )?))
        }
        "conservative" => {
            params.only(name, &["order", "allocator"])?;
            Ok(Box::new(Backfill::new(
                "conservative",
                None,
                params
                    .order
                    .clone()
                    .unwrap_or(OrderParam::Order(Order::Fifo)),
                Order::Fifo,
                "backfill",
            )?))
        }
        _ => Err(Error::Input {
            field: "dispatcher",
            row: None,
            message: format!(
                "no native dispatcher {name:?} (the native ones: fifo, sjf, ljf, easy, \
                 conservative)"
            ),
        }),
    }
}

/// The allocator `params` names (default `first-fit`), unstarted.
pub fn allocator_of(params: &Params) -> Result<Box<dyn crate::alloc::Allocator>, Error> {
    make_allocator(params.allocator.as_deref().unwrap_or("first-fit"))
}

/// The native dispatchers that place jobs on nodes, by registered name: `fifo`,
/// `sjf`, `ljf` (strict or `skip`), `easy` and `conservative`
/// ([`crate::backfill_nodes`]), with their `allocator`. Parameters are checked as
/// in [`make_dispatcher_with`] (which builds the same dispatcher for counting runs);
/// `n_jobs`, when given, is the length every rank array must have.
///
/// **Adding a node-level dispatcher**: implement [`Dispatcher::start_nodes`] and
/// [`Dispatcher::dispatch_nodes`] and add its branch here (the Python side then lists
/// it in `NODE_LEVEL` of `dispatchlab.sim.native`).
pub fn make_node_dispatcher(
    name: &str,
    params: &Params,
    n_jobs: Option<usize>,
) -> Result<Box<dyn Dispatcher>, Error> {
    // the parameters checked (and rank lengths) as for a counting run
    make_dispatcher_with(name, params, n_jobs)?;
    match name {
        "fifo" => Ok(Box::new(NodeList::fifo(allocator_of(params)?))),
        "sjf" | "ljf" => Ok(Box::new(NodeList::sorted(
            name == "ljf",
            params.skip.unwrap_or(false),
            allocator_of(params)?,
        ))),
        // easy and conservative: the counting dispatcher's parameters, planned on nodes
        "easy" | "conservative" => {
            let counting = make_backfill(name, params)?;
            Ok(Box::new(NodeBackfill::new(counting, allocator_of(params)?)))
        }
        _ => Err(Error::Input {
            field: "dispatcher",
            row: None,
            message: format!(
                "dispatcher {name:?} is not native on node-level platforms yet (the native \
                 ones there: fifo, sjf, ljf, easy, conservative)"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_break_ties_by_queue_order() {
        let est = [5, 3, 5, 1, 3];
        let mut jobs = vec![4, 2, 0, 3, 1];
        Order::Sjf.sort(&mut jobs, &est);
        assert_eq!(jobs, vec![3, 1, 4, 0, 2]);
        Order::Fifo.sort(&mut jobs, &est);
        assert_eq!(jobs, vec![0, 1, 2, 3, 4]);
        Order::Rank(vec![2, 0, 2, 9, 1]).sort(&mut jobs, &est);
        assert_eq!(jobs, vec![1, 4, 0, 2, 3]);
    }

    #[test]
    fn unknown_names_and_parameters_are_input_errors() {
        assert!(matches!(
            make_dispatcher("lifo"),
            Err(Error::Input {
                field: "dispatcher",
                ..
            })
        ));
        let skip = Params {
            skip: Some(true),
            ..Params::default()
        };
        let e = make_dispatcher_with("easy", &skip, None).err().unwrap();
        assert_eq!(
            e.to_string(),
            "skip: easy has no parameter skip (its parameters: order, reservations, \
             priority, scope, allocator)"
        );
        let zero = Params {
            reservations: Some(0),
            ..Params::default()
        };
        assert!(make_dispatcher_with("easy", &zero, None).is_err());
        let rank = Params {
            order: Some(OrderParam::Order(Order::Rank(vec![0, 1]))),
            ..Params::default()
        };
        let e = make_dispatcher_with("conservative", &rank, Some(3))
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "order: has 2 ranks for 3 jobs");
    }
}
