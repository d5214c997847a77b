//! The hot calls as a CPython extension module (``link_core``), declared by hand against
//! CPython's stable ABI (no crates): the backend's ``send`` (route cache and counters
//! included) and the proxy's wake-up are builtins bound to the core, with no Python frame and
//! no ctypes conversion per call (ctypes costs about 2.5 us a call here); the wake-up calls
//! each ``on_arrival`` itself, and ``ring_start`` hands a ring phase to the core
//! (``ring.rs``), whose end the wake-up reports by calling the engine back. The cold calls (set-up, statistics) stay on the C ABI
//! through ctypes.

use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::null_mut;

use crate::ring::{PhaseParams, Ring};
use crate::{Core, SEQ_LIMIT};

#[repr(C)]
pub struct PyObject {
    ob_refcnt: isize,
    ob_type: *mut c_void,
}

type FastCall = unsafe extern "C" fn(*mut PyObject, *const *mut PyObject, isize) -> *mut PyObject;
type OneArg = unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject;

#[repr(C)]
pub struct PyMethodDef {
    ml_name: *const c_char,
    ml_meth: *const c_void,
    ml_flags: c_int,
    ml_doc: *const c_char,
}

#[repr(C)]
pub struct PyModuleDefBase {
    ob_base: PyObject,
    m_init: *const c_void,
    m_index: isize,
    m_copy: *mut PyObject,
}

#[repr(C)]
pub struct PyModuleDef {
    m_base: PyModuleDefBase,
    m_name: *const c_char,
    m_doc: *const c_char,
    m_size: isize,
    m_methods: *const PyMethodDef,
    m_slots: *const c_void,
    m_traverse: *const c_void,
    m_clear: *const c_void,
    m_free: *const c_void,
}

const METH_O: c_int = 0x0008;
const METH_FASTCALL: c_int = 0x0080;
const API_VERSION: c_int = 1013;

extern "C" {
    static mut _Py_NoneStruct: PyObject;
    static mut PyExc_RuntimeError: *mut PyObject;
    static mut PyExc_TypeError: *mut PyObject;
    fn Py_IncRef(o: *mut PyObject);
    fn Py_DecRef(o: *mut PyObject);
    fn PyModule_Create2(def: *mut PyModuleDef, api: c_int) -> *mut PyObject;
    fn PyCFunction_NewEx(ml: *const PyMethodDef, slf: *mut PyObject, module: *mut PyObject) -> *mut PyObject;
    fn PyLong_AsVoidPtr(o: *mut PyObject) -> *mut c_void;
    fn PyLong_AsLongLong(o: *mut PyObject) -> i64;
    fn PyLong_AsUnsignedLongLong(o: *mut PyObject) -> u64;
    fn PyLong_FromLongLong(v: i64) -> *mut PyObject;
    fn PyLong_FromUnsignedLongLong(v: u64) -> *mut PyObject;
    fn PyFloat_AsDouble(o: *mut PyObject) -> f64;
    fn PyFloat_FromDouble(v: f64) -> *mut PyObject;
    fn PyErr_Occurred() -> *mut PyObject;
    fn PyErr_Clear();
    fn PyErr_SetString(t: *mut PyObject, msg: *const c_char);
    fn PyList_Size(o: *mut PyObject) -> isize;
    fn PyList_GetItem(o: *mut PyObject, i: isize) -> *mut PyObject;
    fn PyTuple_GetItem(o: *mut PyObject, i: isize) -> *mut PyObject;
    fn PyTuple_Size(o: *mut PyObject) -> isize;
    fn PyTuple_New(n: isize) -> *mut PyObject;
    fn PyList_New(n: isize) -> *mut PyObject;
    fn PyList_Append(l: *mut PyObject, o: *mut PyObject) -> c_int;
    fn PyTuple_SetItem(t: *mut PyObject, i: isize, o: *mut PyObject) -> c_int;
    fn PyIter_Next(o: *mut PyObject) -> *mut PyObject;
    fn PyObject_CallFunctionObjArgs(f: *mut PyObject, ...) -> *mut PyObject;
    fn PyObject_GetAttrString(o: *mut PyObject, name: *const c_char) -> *mut PyObject;
    fn PyObject_SetAttrString(o: *mut PyObject, name: *const c_char, v: *mut PyObject) -> c_int;
}

/// What the core holds of the Python side (strong references, released by [`release`]).
pub struct Host {
    queue: *mut PyObject,
    heap: *mut PyObject,
    seq: *mut PyObject,
    heappush: *mut PyObject,
    wake: *mut PyObject,
    /// ``graph.route(src, dst)`` (asked once per pair) and ``queue.schedule``
    route_of: *mut PyObject,
    schedule: *mut PyObject,
    /// (src, dst) -> route id, -1 for a message that crosses no link
    routes: HashMap<(u64, u64), i64>,
    /// slot -> (on_arrival, arg), strong references while the message is on the links
    calls: Vec<(*mut PyObject, *mut PyObject)>,
    /// ring id -> (on_end, arg), strong references while the core runs the phase
    ring_calls: Vec<(*mut PyObject, *mut PyObject)>,
    /// work id -> (on_done, arg), strong references while the core runs the collective
    work_calls: Vec<(*mut PyObject, *mut PyObject)>,
    /// messages delivered, messages sent, bytes sent
    delivered: u64,
    sent: u64,
    bytes_sent: f64,
    counted: u64,
    /// the id that ``wake`` and ``send`` are bound to (see [`LIVE`])
    id: u64,
    /// true while ``wake`` runs a callback: a call from Python is then inside the core's
    /// event, whose key is ``Core::cur``; else inside the kernel's current event
    in_wake: bool,
}

/// Live cores by id. ``wake`` and ``send`` are bound to an id, not to the core's address: a
/// proxy left in a kernel heap after its backend was freed (a run stopped by an error, then
/// the queue run again) finds no core and does nothing, instead of reading freed memory.
/// Ids are never reused. Only touched with the GIL held.
static mut LIVE: Option<HashMap<u64, usize>> = None;
static mut NEXT_ID: u64 = 1;

unsafe fn live() -> &'static mut HashMap<u64, usize> {
    (*std::ptr::addr_of_mut!(LIVE)).get_or_insert_with(HashMap::new)
}

/// The live core an id names.
unsafe fn bound(o: *mut PyObject) -> Option<*mut Core> {
    let id = PyLong_AsUnsignedLongLong(o);
    live().get(&id).map(|&p| p as *mut Core)
}

unsafe fn none() -> *mut PyObject {
    let n = std::ptr::addr_of_mut!(_Py_NoneStruct);
    Py_IncRef(n);
    n
}

unsafe fn fail(msg: &'static CStr) -> *mut PyObject {
    PyErr_SetString(PyExc_RuntimeError, msg.as_ptr());
    null_mut()
}

unsafe fn wrong_arguments(msg: &'static CStr) -> *mut PyObject {
    PyErr_SetString(PyExc_TypeError, msg.as_ptr());
    null_mut()
}

unsafe fn core_of(o: *mut PyObject) -> *mut Core {
    PyLong_AsVoidPtr(o) as *mut Core
}

/// Release the references the core holds (from ``lc_free``).
pub unsafe fn release(host: &mut Option<Host>) {
    if let Some(h) = host.take() {
        live().remove(&h.id);
        for (cb, arg) in h.calls.into_iter().chain(h.ring_calls).chain(h.work_calls) {
            if !cb.is_null() {
                Py_DecRef(cb);
                Py_DecRef(arg);
            }
        }
        for o in [h.queue, h.heap, h.seq, h.heappush, h.wake, h.route_of, h.schedule] {
            Py_DecRef(o);
        }
    }
}

/// The next number of the kernel's counter (None with a Python error set: the counter failed
/// or went past what the core's packed event keys hold, ``SEQ_LIMIT``).
unsafe fn next_seq(h: &Host) -> Option<u64> {
    let n = PyIter_Next(h.seq);
    if n.is_null() {
        return None;
    }
    let v = PyLong_AsUnsignedLongLong(n);
    Py_DecRef(n);
    if v >= SEQ_LIMIT {
        fail(c"link core: the kernel's event counter passed 2**40 numbers, more than the core's event keys hold");
        return None;
    }
    Some(v)
}

/// A fresh number of the kernel's counter in the middle of the core's run (``Core::next_key``).
pub unsafe fn fresh_seq(host: Option<&Host>) -> u64 {
    host.and_then(|h| next_seq(h)).expect("the kernel's counter gives numbers to the core")
}

/// The kernel's now and the next number of its counter: the key of a call from Python. Also
/// sets the core's current event (``Core::cur``) to the kernel's, unless the call comes from a
/// callback of the core's own event (``wake``), whose key it already is.
unsafe fn now_and_seq(c: &mut Core) -> Option<(f64, u64)> {
    let h = c.host.as_ref().unwrap();
    let now_o = PyObject_GetAttrString(h.queue, c"now".as_ptr());
    if now_o.is_null() {
        return None;
    }
    let now = PyFloat_AsDouble(now_o);
    Py_DecRef(now_o);
    if !h.in_wake {
        let seq_o = PyObject_GetAttrString(h.queue, c"current_seq".as_ptr());
        if seq_o.is_null() {
            return None;
        }
        let current = PyLong_AsLongLong(seq_o);
        Py_DecRef(seq_o);
        c.cur = (now, current, 0);
    }
    let h = c.host.as_ref().unwrap();
    Some((now, next_seq(h)?))
}

/// Push a proxy at the core's earliest event when it asked for one.
unsafe fn arm(c: &Core, h: &Host) -> bool {
    if c.state[2] == 0.0 {
        return true;
    }
    let t = PyTuple_New(4);
    PyTuple_SetItem(t, 0, PyFloat_FromDouble(c.state[0]));
    PyTuple_SetItem(t, 1, PyLong_FromUnsignedLongLong(c.state[1] as u64));
    Py_IncRef(h.wake);
    PyTuple_SetItem(t, 2, h.wake);
    PyTuple_SetItem(t, 3, none());
    let r = PyObject_CallFunctionObjArgs(h.heappush, h.heap, t, null_mut::<PyObject>());
    Py_DecRef(t);
    if r.is_null() {
        return false;
    }
    Py_DecRef(r);
    true
}

/// ``attach(core, queue, heappush, route_of)``: the kernel this core runs on and the graph's
/// routes; returns ``(wake, send, ring_start, work_start)``: the proxy's callable, the
/// backend's ``send(src, dst, nbytes, on_arrival, arg=None)``, [`ring_start`] and
/// [`work_start`], all bound to this core.
unsafe extern "C" fn attach(_m: *mut PyObject, args: *const *mut PyObject, n: isize) -> *mut PyObject {
    if n != 4 {
        return wrong_arguments(c"attach(core, queue, heappush, route_of) takes 4 arguments");
    }
    let c = &mut *core_of(*args);
    let queue = *args.add(1);
    let heap = PyObject_GetAttrString(queue, c"_heap".as_ptr());
    let seq = PyObject_GetAttrString(queue, c"_seq".as_ptr());
    let schedule = PyObject_GetAttrString(queue, c"schedule".as_ptr());
    if heap.is_null() || seq.is_null() || schedule.is_null() {
        return null_mut();
    }
    let id = NEXT_ID;
    let id_o = PyLong_FromUnsignedLongLong(id);
    let wake = PyCFunction_NewEx(std::ptr::addr_of!(WAKE), id_o, null_mut());
    let send = PyCFunction_NewEx(std::ptr::addr_of!(SEND), id_o, null_mut());
    let ring = PyCFunction_NewEx(std::ptr::addr_of!(RING_START), id_o, null_mut());
    let work = PyCFunction_NewEx(std::ptr::addr_of!(WORK_START), id_o, null_mut());
    Py_DecRef(id_o);
    if wake.is_null() || send.is_null() || ring.is_null() || work.is_null() {
        return null_mut();
    }
    NEXT_ID += 1;
    Py_IncRef(queue);
    Py_IncRef(*args.add(2));
    Py_IncRef(*args.add(3));
    release(&mut c.host);
    Py_IncRef(wake);
    live().insert(id, c as *mut Core as usize);
    c.host = Some(Host {
        id,
        queue,
        heap,
        seq,
        heappush: *args.add(2),
        wake,
        route_of: *args.add(3),
        schedule,
        routes: HashMap::new(),
        calls: Vec::new(),
        ring_calls: Vec::new(),
        work_calls: Vec::new(),
        delivered: 0,
        sent: 0,
        bytes_sent: 0.0,
        counted: 0,
        in_wake: false,
    });
    let out = PyTuple_New(4);
    PyTuple_SetItem(out, 0, wake);
    PyTuple_SetItem(out, 1, send);
    PyTuple_SetItem(out, 2, ring);
    PyTuple_SetItem(out, 3, work);
    out
}

/// The route id of (src, dst), registering the route the first time (-1: no link).
unsafe fn route_id(c: &mut Core, src: u64, dst: u64) -> Option<i64> {
    let h = c.host.as_ref().unwrap();
    if let Some(&rid) = h.routes.get(&(src, dst)) {
        return Some(rid);
    }
    let (a, b) = (PyLong_FromUnsignedLongLong(src), PyLong_FromUnsignedLongLong(dst));
    let route = PyObject_CallFunctionObjArgs(h.route_of, a, b, null_mut::<PyObject>());
    Py_DecRef(a);
    Py_DecRef(b);
    if route.is_null() {
        return None;
    }
    let len = PyTuple_Size(route);
    let mut links = Vec::with_capacity(len.max(0) as usize);
    for k in 0..len {
        links.push(PyLong_AsLongLong(PyTuple_GetItem(route, k)));
    }
    Py_DecRef(route);
    if len < 0 || !PyErr_Occurred().is_null() {
        return None;
    }
    if links.iter().any(|&l| l < 0 || l as usize >= c.busy.len()) {
        fail(c"link core: a route names a link the graph does not have");
        return None;
    }
    let rid = if links.is_empty() {
        -1
    } else {
        c.route_links.extend(links.iter().map(|&l| l as u32));
        c.route_start.push(c.route_links.len() as u32);
        (c.route_start.len() - 2) as i64
    };
    c.host.as_mut().unwrap().routes.insert((src, dst), rid);
    Some(rid)
}

/// ``send(src, dst, nbytes, on_arrival, arg=None)`` bound to a core: a message onto its route
/// at the kernel's now (a message that crosses no link is delivered by the kernel at once).
unsafe extern "C" fn send(core: *mut PyObject, args: *const *mut PyObject, n: isize) -> *mut PyObject {
    if !(4..=5).contains(&n) {
        return wrong_arguments(c"send(src, dst, nbytes, on_arrival, arg=None) takes 4 or 5 arguments");
    }
    let Some(c) = bound(core) else { return fail(c"link core: send on a freed backend") };
    let c = &mut *c;
    // ints or anything with __index__ (numpy integers); a size may also be a float
    let src = PyLong_AsLongLong(*args);
    let dst = PyLong_AsLongLong(*args.add(1));
    if !PyErr_Occurred().is_null() {
        return null_mut();
    }
    if src < 0 || dst < 0 {
        return fail(c"link core: a negative rank");
    }
    let (src, dst) = (src as u64, dst as u64);
    let mut nbytes = PyLong_AsLongLong(*args.add(2)) as f64;
    if !PyErr_Occurred().is_null() {
        PyErr_Clear();
        nbytes = PyFloat_AsDouble(*args.add(2));
        if !PyErr_Occurred().is_null() {
            return null_mut();
        }
    }
    let (cb, arg) = (*args.add(3), if n == 5 { *args.add(4) } else { std::ptr::addr_of_mut!(_Py_NoneStruct) });
    {
        let h = c.host.as_mut().unwrap();
        h.sent += 1;
        h.bytes_sent += nbytes;
    }
    let Some(rid) = route_id(c, src, dst) else { return null_mut() };
    let h = c.host.as_mut().unwrap();
    if rid < 0 {
        h.delivered += 1; // crosses no link: the kernel delivers it in this tick
        let zero = PyFloat_FromDouble(0.0);
        let r = PyObject_CallFunctionObjArgs(h.schedule, zero, cb, arg, null_mut::<PyObject>());
        Py_DecRef(zero);
        if r.is_null() {
            return null_mut();
        }
        Py_DecRef(r);
        return none();
    }
    let Some((now, seq)) = now_and_seq(c) else { return null_mut() };
    Py_IncRef(cb);
    Py_IncRef(arg);
    let slot = c.send(rid as u32, nbytes, now, seq) as usize;
    let h = c.host.as_mut().unwrap();
    if slot >= h.calls.len() {
        h.calls.resize(slot + 1, (null_mut(), null_mut())); // ring messages take slots too
    }
    h.calls[slot] = (cb, arg);
    if !arm(c, c.host.as_ref().unwrap()) {
        return null_mut();
    }
    none()
}

/// The proxy's callable: run the core up to the kernel's next event, calling each
/// delivered message's ``on_arrival(arg)`` in its place.
unsafe extern "C" fn wake(core: *mut PyObject, _arg: *mut PyObject) -> *mut PyObject {
    let Some(c) = bound(core) else { return none() }; // its backend is gone: nothing to run
    let c = &mut *c;
    c.host.as_mut().unwrap().in_wake = true;
    let out = run_and_call_back(c);
    c.host.as_mut().unwrap().in_wake = false;
    out
}

unsafe fn run_and_call_back(c: &mut Core) -> *mut PyObject {
    let mut woken = true;
    loop {
        let h = c.host.as_ref().unwrap();
        let (limit_t, limit_seq) = if PyList_Size(h.heap) > 0 {
            let top = PyList_GetItem(h.heap, 0);
            let t = PyFloat_AsDouble(PyTuple_GetItem(top, 0));
            (t, PyLong_AsLongLong(PyTuple_GetItem(top, 1)))
        } else {
            (0.0, -1)
        };
        let Some(seq) = next_seq(h) else { return null_mut() };
        let slot = c.run(limit_t, limit_seq, seq, woken);
        woken = false;
        if slot == -1 {
            break;
        }
        let h = c.host.as_mut().unwrap();
        let mut spans: *mut PyObject = null_mut();
        let (cb, arg) = if slot >= 0 {
            h.delivered += 1;
            std::mem::replace(&mut h.calls[slot as usize], (null_mut(), null_mut()))
        } else if (-2 - slot) % 2 == 0 {
            std::mem::replace(&mut h.ring_calls[((-2 - slot) / 2) as usize], (null_mut(), null_mut()))
        } else {
            let work = ((-3 - slot) / 2) as usize;
            let times = std::mem::take(&mut c.queues.works[work].spans);
            spans = PyTuple_New(times.len() as isize);
            for (k, t) in times.iter().enumerate() {
                PyTuple_SetItem(spans, k as isize, PyFloat_FromDouble(*t));
            }
            let h = c.host.as_mut().unwrap();
            std::mem::replace(&mut h.work_calls[work], (null_mut(), null_mut()))
        };
        let h = c.host.as_mut().unwrap();
        let now = PyFloat_FromDouble(c.state[3]);
        let ok = PyObject_SetAttrString(h.queue, c"now".as_ptr(), now);
        Py_DecRef(now);
        let r = if ok != 0 {
            null_mut()
        } else if spans.is_null() {
            PyObject_CallFunctionObjArgs(cb, arg, null_mut::<PyObject>())
        } else {
            let r = PyObject_CallFunctionObjArgs(cb, arg, spans, null_mut::<PyObject>());
            Py_DecRef(spans);
            r
        };
        Py_DecRef(cb);
        Py_DecRef(arg);
        if r.is_null() {
            return null_mut();
        }
        Py_DecRef(r);
    }
    let h = c.host.as_mut().unwrap();
    // the kernel counted this proxy as one event: count the core's events instead
    let add = c.events as i64 - h.counted as i64 - 1;
    h.counted = c.events;
    let name = c"events_processed".as_ptr();
    let before = PyObject_GetAttrString(h.queue, name);
    if before.is_null() {
        return null_mut();
    }
    let total = PyLong_FromLongLong(PyLong_AsLongLong(before) + add);
    Py_DecRef(before);
    let ok = PyObject_SetAttrString(h.queue, name, total);
    Py_DecRef(total);
    if ok != 0 || !arm(c, c.host.as_ref().unwrap()) {
        return null_mut();
    }
    none()
}

/// ``sent(core)``: (messages sent, bytes sent, messages delivered).
unsafe extern "C" fn sent(_m: *mut PyObject, core: *mut PyObject) -> *mut PyObject {
    let c = &*core_of(core);
    let (m, b, d) = c.host.as_ref().map_or((0, 0.0, 0), |h| (h.sent, h.bytes_sent, h.delivered));
    let r = &c.rings;
    let (m, b, d) = (m + r.sent, b + r.bytes_sent, d + r.delivered);
    let out = PyTuple_New(3);
    PyTuple_SetItem(out, 0, PyLong_FromUnsignedLongLong(m));
    PyTuple_SetItem(out, 1, PyFloat_FromDouble(b));
    PyTuple_SetItem(out, 2, PyLong_FromUnsignedLongLong(d));
    out
}

/// ``ring_start(rank, dst, src, tag, msg, first, later, sends_left, flags, delay, on_end,
/// arg)`` bound to a core: a ring phase (``ring.rs``) taken over at the kernel's now, which
/// calls ``on_end(arg)`` when it is over. ``flags``: 1 reduce-scatter (every later insertion
/// reduces), 2 all-reduce (later insertions of odd rounds reduce), 4 the Fast path.
/// ``delay``: each message's delay in ns when the backend prices messages itself, else
/// negative (the messages take the links of their route).
unsafe extern "C" fn ring_start(core: *mut PyObject, args: *const *mut PyObject, n: isize) -> *mut PyObject {
    if n != 12 {
        return wrong_arguments(c"ring_start(rank, dst, src, tag, msg, first, later, sends_left, flags, delay, on_end, arg) takes 12 arguments");
    }
    let Some(c) = bound(core) else { return fail(c"link core: ring_start on a freed backend") };
    let c = &mut *c;
    let Some([rank, dst, src, tag, msg, first, later, sends, flags]) = longs::<9>(|i| *args.add(i)) else { return null_mut() };
    if rank < 0 || first < 1 {
        return fail(c"link core: ring_start with a negative rank or no first insertion");
    }
    let Some(p) = phase_params(c, rank as u32, [0, dst, src, msg, later, sends, flags], *args.add(9)) else { return null_mut() };
    let Some((now, seq)) = now_and_seq(c) else { return null_mut() };
    let ring = Ring::of(rank as u32, tag, &p, first as u32, -1);
    let id = c.ring_start(ring, now, seq) as usize;
    keep_and_arm(c, |h| &mut h.ring_calls, id, *args.add(10), *args.add(11))
}

/// ``N`` integers, ``get(i)`` each (arguments or tuple items), or None with the Python error.
unsafe fn longs<const N: usize>(get: impl Fn(usize) -> *mut PyObject) -> Option<[i64; N]> {
    let mut v = [0i64; N];
    for (i, x) in v.iter_mut().enumerate() {
        *x = PyLong_AsLongLong(get(i));
    }
    if PyErr_Occurred().is_null() {
        Some(v)
    } else {
        None
    }
}

/// A ring phase's numbers from Python, ``(queue id, dst, src, msg, later, sends, flags)`` and
/// the delay (a float): none negative, and the route of ``rank -> dst`` when its messages take
/// links (``delay`` < 0). None with a Python error.
unsafe fn phase_params(c: &mut Core, rank: u32, v: [i64; 7], delay_o: *mut PyObject) -> Option<PhaseParams> {
    let delay = PyFloat_AsDouble(delay_o);
    if !PyErr_Occurred().is_null() {
        return None;
    }
    let [qid, dst, src, msg, later, sends, flags] = v;
    if qid < 0 || dst < 0 || src < 0 || msg < 0 || later < 0 || sends < 0 {
        fail(c"link core: a ring phase with a negative queue, peer, size or count");
        return None;
    }
    let route = if delay >= 0.0 { -1 } else { route_id(c, rank as u64, dst as u64)? };
    Some(PhaseParams { qid: qid as u32, dst: dst as u32, src: src as u32, route, delay, msg, later: later as u32, sends: sends as u64, flags: flags as u32 })
}

/// The length of ``o``, a non-empty list, or None with a RuntimeError saying ``what``.
unsafe fn nonempty_list(o: *mut PyObject, what: &'static CStr) -> Option<isize> {
    let n = PyList_Size(o);
    if n < 1 {
        fail(what);
        return None;
    }
    Some(n)
}

/// Hold ``(cb, arg)`` at ``id`` of the host's list ``calls`` picks (strong references), then
/// push a proxy if the core asked for one; the builtin's return value.
unsafe fn keep_and_arm(
    c: &mut Core,
    calls: fn(&mut Host) -> &mut Vec<(*mut PyObject, *mut PyObject)>,
    id: usize,
    cb: *mut PyObject,
    arg: *mut PyObject,
) -> *mut PyObject {
    Py_IncRef(cb);
    Py_IncRef(arg);
    let list = calls(c.host.as_mut().unwrap());
    if id >= list.len() {
        list.resize(id + 1, (null_mut(), null_mut()));
    }
    list[id] = (cb, arg);
    if !arm(c, c.host.as_ref().unwrap()) {
        return null_mut();
    }
    none()
}

/// ``ring_waiting(core)``: (receiver, chunk tag, sender, bytes) of each receive a ring phase
/// posted and no message matched (deadlock reports).
unsafe extern "C" fn ring_waiting(_m: *mut PyObject, core: *mut PyObject) -> *mut PyObject {
    let c = &*core_of(core);
    let out = PyList_New(0);
    for (dst, tag, src, nbytes) in c.rings.waiting() {
        let t = PyTuple_New(4);
        PyTuple_SetItem(t, 0, PyLong_FromUnsignedLongLong(dst as u64));
        PyTuple_SetItem(t, 1, PyLong_FromLongLong(tag));
        PyTuple_SetItem(t, 2, PyLong_FromUnsignedLongLong(src as u64));
        PyTuple_SetItem(t, 3, PyLong_FromLongLong(nbytes));
        PyList_Append(out, t);
        Py_DecRef(t);
    }
    out
}

/// ``work_start(rank, priority, tag_base, limit, chunks, on_done, arg)`` bound to a core: a
/// rank's whole collective (``queues.rs``) taken over at the kernel's now; ``chunks`` lists
/// each chunk's phases as ``(queue id, dst, src, msg, later, sends, flags, delay)`` tuples
/// (``ring_start``'s numbers); ``limit``: chunks a dimension queue runs at once. Calls
/// ``on_done(arg, spans)`` when the last chunk ends, ``spans`` each chunk's start and end ns.
unsafe extern "C" fn work_start(core: *mut PyObject, args: *const *mut PyObject, n: isize) -> *mut PyObject {
    if n != 7 {
        return wrong_arguments(c"work_start(rank, priority, tag_base, limit, chunks, on_done, arg) takes 7 arguments");
    }
    let Some(c) = bound(core) else { return fail(c"link core: work_start on a freed backend") };
    let c = &mut *c;
    let Some([rank, priority, tag_base, limit]) = longs::<4>(|i| *args.add(i)) else { return null_mut() };
    if rank < 0 || limit < 1 {
        return fail(c"link core: work_start with a negative rank or no room in a queue");
    }
    let chunks_o = *args.add(4);
    let Some(nchunks) = nonempty_list(chunks_o, c"link core: work_start needs a list of chunks") else { return null_mut() };
    let mut chunks = Vec::with_capacity(nchunks as usize);
    for k in 0..nchunks {
        let phases_o = PyList_GetItem(chunks_o, k);
        let Some(nphases) = nonempty_list(phases_o, c"link core: work_start needs each chunk's phases as a list") else {
            return null_mut();
        };
        let mut phases = Vec::with_capacity(nphases as usize);
        for j in 0..nphases {
            let t = PyList_GetItem(phases_o, j);
            if PyTuple_Size(t) != 8 {
                return fail(c"link core: a phase is (queue id, dst, src, msg, later, sends, flags, delay)");
            }
            let Some(v) = longs::<7>(|i| PyTuple_GetItem(t, i as isize)) else { return null_mut() };
            let Some(p) = phase_params(c, rank as u32, v, PyTuple_GetItem(t, 7)) else { return null_mut() };
            phases.push(p);
        }
        chunks.push(phases);
    }
    let Some((now, seq)) = now_and_seq(c) else { return null_mut() };
    let id = c.work_start(rank as u32, priority, tag_base, limit as u32, chunks, now, seq) as usize;
    keep_and_arm(c, |h| &mut h.work_calls, id, *args.add(5), *args.add(6))
}

static mut WORK_START: PyMethodDef = PyMethodDef {
    ml_name: c"work_start".as_ptr(),
    ml_meth: work_start as FastCall as *const c_void,
    ml_flags: METH_FASTCALL,
    ml_doc: null_mut() as *const c_char,
};

static mut RING_START: PyMethodDef = PyMethodDef {
    ml_name: c"ring_start".as_ptr(),
    ml_meth: ring_start as FastCall as *const c_void,
    ml_flags: METH_FASTCALL,
    ml_doc: null_mut() as *const c_char,
};

static mut WAKE: PyMethodDef =
    PyMethodDef { ml_name: c"wake".as_ptr(), ml_meth: wake as OneArg as *const c_void, ml_flags: METH_O, ml_doc: null_mut() as *const c_char };

static mut SEND: PyMethodDef =
    PyMethodDef { ml_name: c"send".as_ptr(), ml_meth: send as FastCall as *const c_void, ml_flags: METH_FASTCALL, ml_doc: null_mut() as *const c_char };

static mut METHODS: [PyMethodDef; 4] = [
    PyMethodDef { ml_name: c"attach".as_ptr(), ml_meth: attach as FastCall as *const c_void, ml_flags: METH_FASTCALL, ml_doc: null_mut() as *const c_char },
    PyMethodDef { ml_name: c"sent".as_ptr(), ml_meth: sent as OneArg as *const c_void, ml_flags: METH_O, ml_doc: null_mut() as *const c_char },
    PyMethodDef { ml_name: c"ring_waiting".as_ptr(), ml_meth: ring_waiting as OneArg as *const c_void, ml_flags: METH_O, ml_doc: null_mut() as *const c_char },
    PyMethodDef { ml_name: std::ptr::null(), ml_meth: std::ptr::null(), ml_flags: 0, ml_doc: std::ptr::null() },
];

static mut MODULE: PyModuleDef = PyModuleDef {
    m_base: PyModuleDefBase { ob_base: PyObject { ob_refcnt: 1, ob_type: null_mut() }, m_init: std::ptr::null(), m_index: 0, m_copy: null_mut() },
    m_name: c"link_core".as_ptr(),
    m_doc: c"Hot calls of trainsim's congestion-aware compiled core".as_ptr(),
    m_size: -1,
    m_methods: std::ptr::null(),
    m_slots: std::ptr::null(),
    m_traverse: std::ptr::null(),
    m_clear: std::ptr::null(),
    m_free: std::ptr::null(),
};

/// # Safety
/// Called once by CPython's import machinery, with the GIL held.
#[no_mangle]
pub unsafe extern "C" fn PyInit_link_core() -> *mut PyObject {
    let m = std::ptr::addr_of_mut!(MODULE);
    (*m).m_methods = std::ptr::addr_of!(METHODS) as *const PyMethodDef;
    PyModule_Create2(m, API_VERSION)
}
