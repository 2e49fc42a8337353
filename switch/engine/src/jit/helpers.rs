//! The interpreter's entry points the generated code calls back.
//!
//! Each takes the [`Env`] the pipeline was started with and reborrows the
//! program, state and packet from it for the duration of the call.

use super::codegen::Fallback;
use super::node_code;
use crate::exec::{
    calculate, idx, run_action, select_default, select_general, selected_data, Pkt, State,
};
use crate::phv::{mask, Val};
use crate::program::{EvalCtx, Program};

/// What a pipeline runs against; the code passes it through untouched.
#[repr(C)]
pub(crate) struct Env {
    pub prog: *const Program,
    pub st: *mut State,
    pub pkt: *mut Pkt,
}

/// `site` of an action called from control code: no action data.
pub(crate) const NO_DATA: u32 = u32::MAX;
/// `site` of an action a table selected: its data is the table's selection
/// ([`selected_data`]). Any other `site` is a one-action table whose
/// constant data the action gets.
pub(crate) const SELECTED: u32 = u32::MAX - 1;

/// The program, state and packet behind `env`.
///
/// # Safety
/// `env` must be the context `Jit::run` passed to the running pipeline.
unsafe fn parts<'a>(env: *mut Env) -> (&'a Program, &'a mut State, &'a mut Pkt) {
    unsafe { (&*(*env).prog, &mut *(*env).st, &mut *(*env).pkt) }
}

/// Runs `f` with the action data of `site`.
fn with_data(p: &Program, st: &mut State, site: u32, f: impl FnOnce(&mut State, &[Val])) {
    match site {
        NO_DATA => f(st, &[]),
        SELECTED => {
            let data = std::mem::take(&mut st.adata);
            f(st, &data);
            st.adata = data;
        }
        t => {
            let data = p
                .tables
                .get(t as usize)
                .and_then(|t| t.fixed.as_ref())
                .map_or(&[][..], |f| &f.data[..]);
            f(st, data)
        }
    }
}

/// Looks table `ti` up (see `exec::select_action`) without running the
/// action: writes the action (`u32::MAX`: none), its data and their count
/// to the `out` slots, and returns the next node ([`node_code`]).
pub(crate) extern "C" fn select(
    env: *mut Env,
    ti: u32,
    action_out: *mut u32,
    data_out: *mut *const Val,
    len_out: *mut u64,
) -> i64 {
    // SAFETY: `env` is the running pipeline's; the out pointers are slots
    // of the calling function's frame.
    unsafe {
        let (p, st, _) = parts(env);
        let t = &p.tables[ti as usize];
        // A table that cannot hit: kept short (no call, few registers to
        // save), as most tables a routed packet meets are.
        let Some(action) = select_default(t, st, ti) else {
            return select_looked_up(env, ti, action_out, data_out, len_out);
        };
        write_selection(st, action, action_out, data_out, len_out);
        node_code(t.next_node_inline(false, action))
    }
}

/// [`select`] for a table that may hit (or has an action profile's
/// default).
#[inline(never)]
unsafe fn select_looked_up(
    env: *mut Env,
    ti: u32,
    action_out: *mut u32,
    data_out: *mut *const Val,
    len_out: *mut u64,
) -> i64 {
    // SAFETY: as `select`'s.
    unsafe {
        let (p, st, pkt) = parts(env);
        let (hit, action) = select_general(p, st, pkt, ti);
        write_selection(st, action, action_out, data_out, len_out);
        node_code(p.tables[ti as usize].next_node(hit, action))
    }
}

/// Writes the selected action (`u32::MAX`: none) and its data to the out
/// slots.
///
/// # Safety
/// The out pointers must be writable (slots of the calling code's frame).
#[inline(always)]
unsafe fn write_selection(
    st: &State,
    action: Option<u32>,
    action_out: *mut u32,
    data_out: *mut *const Val,
    len_out: *mut u64,
) {
    let data = selected_data(st);
    // SAFETY: the caller's.
    unsafe {
        action_out.write(action.unwrap_or(u32::MAX));
        data_out.write(data.as_ptr());
        len_out.write(data.len() as u64);
    }
}

/// Runs action `a` through the interpreter; returns 1 when it ran `exit`.
pub(crate) extern "C" fn action(env: *mut Env, a: u32, site: u32) -> u32 {
    // SAFETY: `env` is the running pipeline's.
    let (p, st, pkt) = unsafe { parts(env) };
    with_data(p, st, site, |st, data| run_action(p, st, pkt, a, data));
    pkt.flags.exit as u32
}

/// Runs primitive `i` of action `a` (its compiled step).
pub(crate) extern "C" fn step(env: *mut Env, a: u32, i: u32, site: u32) {
    // SAFETY: `env` is the running pipeline's.
    let (p, st, pkt) = unsafe { parts(env) };
    if let Some(steps) = p.actions.get(a as usize).and_then(|a| a.steps.as_ref()) {
        with_data(p, st, site, |st, data| {
            steps.run_one(i as usize, p, st, pkt, data)
        });
    }
}

/// Evaluates an expression the code does not handle itself into `*out`.
pub(crate) extern "C" fn eval(env: *mut Env, fb: *const Fallback, out: *mut i128) {
    // SAFETY: `env` is the running pipeline's; `fb` points into the `Jit`'s
    // fallbacks, and `out` at a slot of the calling function's frame.
    unsafe {
        let (p, st, pkt) = parts(env);
        let fb = &*fb;
        let data = if fb.selected {
            selected_data(st)
        } else {
            &fb.data
        };
        let v = fb.expr.eval(&EvalCtx {
            prog: p,
            phv: &pkt.phv,
            data,
        });
        out.write_unaligned(v);
    }
}

/// An `i128` the code passes as two halves (the C ABI has no `i128`).
fn join(lo: u64, hi: u64) -> Val {
    ((hi as u128) << 64 | lo as u128) as Val
}

/// `register_read`: writes element `index` of register `r` (0 when out of
/// range) to `*out`.
pub(crate) extern "C" fn reg_read(env: *mut Env, r: u32, lo: u64, hi: u64, out: *mut i128) {
    // SAFETY: `env` is the running pipeline's; `out` is a slot of its frame.
    let (p, st, _) = unsafe { parts(env) };
    let r = r as usize;
    let v = idx(join(lo, hi), p.registers[r].size).map_or(0, |i| st.registers[r][i]);
    unsafe { out.write_unaligned(v as i128) };
}

/// `register_write`: stores the value (cut to the register's width) when
/// the index is in range.
pub(crate) extern "C" fn reg_write(env: *mut Env, r: u32, lo: u64, hi: u64, vlo: u64, vhi: u64) {
    // SAFETY: `env` is the running pipeline's.
    let (p, st, _) = unsafe { parts(env) };
    let (r, def) = (r as usize, &p.registers[r as usize]);
    if let Some(i) = idx(join(lo, hi), def.size) {
        st.registers[r][i] = join(vlo, vhi) as u128 & mask(def.width);
    }
}

/// `count`: one packet of the packet's length on counter `c`'s element.
pub(crate) extern "C" fn count(env: *mut Env, c: u32, lo: u64, hi: u64) {
    // SAFETY: `env` is the running pipeline's.
    let (p, st, pkt) = unsafe { parts(env) };
    let c = c as usize;
    if let Some(i) = idx(join(lo, hi), p.counters[c].size) {
        let e = &mut st.counters[c][i];
        e.0 += 1;
        e.1 += pkt.len as u64;
    }
}

/// Calculation `calc` on the packet, through the interpreter.
pub(crate) extern "C" fn calc(env: *mut Env, calc: u32) -> u64 {
    // SAFETY: `env` is the running pipeline's.
    let (p, st, pkt) = unsafe { parts(env) };
    calculate(p, st, pkt, calc)
}

/// Bytes in variable-length field slot `slot`.
pub(crate) extern "C" fn varbit_len(env: *mut Env, slot: u32) -> u64 {
    // SAFETY: `env` is the running pipeline's.
    let (_, _, pkt) = unsafe { parts(env) };
    pkt.phv
        .varbits
        .get(slot as usize)
        .map_or(0, |v| v.1.len() as u64)
}

/// Copies the bytes of variable-length field slot `slot` to `dst` (the
/// deparser's output, with room reserved for them); returns their count.
pub(crate) extern "C" fn varbit_copy(env: *mut Env, slot: u32, dst: *mut u8) -> u64 {
    // SAFETY: `env` is the running pipeline's; `dst` has room for every
    // variable-length field's bytes (`Jit::deparse` reserved them).
    let (_, _, pkt) = unsafe { parts(env) };
    let Some((_, bytes)) = pkt.phv.varbits.get(slot as usize) else {
        return 0;
    };
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
    bytes.len() as u64
}

/// Sets variable-length field slot `slot` to the `n` bytes at `src` (the
/// packet, at the parser's cursor).
pub(crate) extern "C" fn varbit_set(env: *mut Env, slot: u32, src: *const u8, n: u64) {
    // SAFETY: `env` is the running pipeline's; the code checked that the
    // `n` bytes at `src` are inside the packet.
    let (_, _, pkt) = unsafe { parts(env) };
    if let Some(vb) = pkt.phv.varbits.get_mut(slot as usize) {
        vb.0 = (n * 8) as u32;
        vb.1.clear();
        vb.1.extend_from_slice(unsafe { std::slice::from_raw_parts(src, n as usize) });
    }
}
