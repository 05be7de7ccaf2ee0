//! The measurements. Each runs the workbench and the direct path (the same
//! `bench serve` server, spoken to by the driver itself) in the same run,
//! alternating round by round, and records rows in the `Ctx`.

use crate::http;
use crate::session::{call_line, call_tail, cpu_ns, is_ok, proc_stat, status_bytes};
use crate::session::{use_tool_tail, Proc};
use crate::{ge, le, Ctx, INHERIT, ONE_CORE, SPLIT};
use serde_json::{json, Value};
use std::io;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

const MB: f64 = 1e6;
const MIB: f64 = 1024.0 * 1024.0;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|t| format!("tb{t}")).collect()
}

fn echo() -> Value {
    json!({"x": 1})
}

fn minus(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(a, b)| a - b).collect()
}

/// 3 and 4: spawn to `initialize` response; RSS idle after `initialize`.
pub fn startup(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = INHERIT; // no taskset exec in the measured time
    let config = ctx.config("ten-by-five", false, (10, 5), &[])?;
    let (mut wb_ms, mut direct_ms, mut rss) = (vec![], vec![], vec![]);
    for i in 0..ctx.n(30, 5) {
        let began = Instant::now();
        let wb = ctx.workbench(&config)?;
        wb_ms.push(ms(began.elapsed()));
        if i < 5 {
            thread::sleep(Duration::from_millis(200));
            rss.push(status_bytes(wb.pid(), "VmRSS")? / MB);
        }
        wb.close()?;
        let began = Instant::now();
        let server = ctx.serve(&[])?;
        direct_ms.push(ms(began.elapsed()));
        server.close()?;
    }
    ctx.check(3, "start to initialize response", "ms", &wb_ms, le(5.0));
    ctx.info("  direct server, the same", "ms", &direct_ms);
    ctx.check(4, "RSS idle after initialize", "MB", &rss, le(4.0));
    Ok(())
}

/// `n` sequential calls; appends their round-trip times in µs.
fn sequential(p: &mut Proc, tail: &str, n: usize, times: &mut Vec<f64>) -> io::Result<()> {
    for _ in 0..n {
        let line = call_line(p.next_id(), tail);
        let began = Instant::now();
        p.send(&line)?;
        let reply = p.recv()?;
        times.push(began.elapsed().as_secs_f64() * 1e6);
        if !is_ok(reply) {
            return Err(p.unexpected());
        }
    }
    Ok(())
}

/// Rounds of sequential calls, the paths taking turns in blocks of 50 calls
/// (so that a burst of noise from elsewhere hits them alike). Per path and
/// round: p50, p99 (µs) and the CPU its process used per call (µs).
fn latency_rounds(ctx: &Ctx, paths: &mut [(&mut Proc, String)]) -> io::Result<Vec<[Vec<f64>; 3]>> {
    let (n, block) = (ctx.n(3000, 500), 50);
    let mut out = vec![<[Vec<f64>; 3]>::default(); paths.len()];
    for (p, tail) in paths.iter_mut() {
        sequential(p, tail, 500, &mut vec![])?; // warm-up
    }
    for _ in 0..ctx.n(7, 3) {
        let mut times = vec![Vec::with_capacity(n); paths.len()];
        let cpu: Vec<f64> = paths
            .iter()
            .map(|(p, _)| cpu_ns(p.pid()))
            .collect::<io::Result<_>>()?;
        for _ in 0..n / block {
            for ((p, tail), times) in paths.iter_mut().zip(&mut times) {
                sequential(p, tail, block, times)?;
            }
        }
        for (i, times) in times.iter_mut().enumerate() {
            times.sort_by(f64::total_cmp);
            let at = |q: f64| times[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
            out[i][0].push(at(0.50));
            out[i][1].push(at(0.99));
            out[i][2].push((cpu_ns(paths[i].0.pid())? - cpu[i]) / 1e3 / n as f64);
        }
    }
    Ok(out)
}

/// The name dynamic mode gives tool `echo` of tb0/s0.
fn native_name(p: &mut Proc) -> io::Result<String> {
    let tools = p.request("tools/list", json!({}))?["tools"].take();
    // `_meta` carries the host hints too (anthropic/alwaysLoad).
    let ours = |t: &&Value| {
        let meta = &t["_meta"];
        meta["toolbox_name"] == "tb0"
            && meta["source_server"] == "s0"
            && meta["original_name"] == "echo"
    };
    let tool = tools.as_array().into_iter().flatten().find(ours);
    let name = tool.and_then(|t| t["name"].as_str()).map(str::to_owned);
    name.ok_or(io::Error::other("dynamic mode lists no native echo tool"))
}

/// 1: added latency per sequential call, via use_tool and via a native tool.
pub fn latency(ctx: &mut Ctx) -> io::Result<()> {
    let proxy = ctx.config("one", false, (1, 1), &[])?;
    let dynamic = ctx.config("one-dynamic", true, (1, 1), &[])?;
    for place in [ONE_CORE, SPLIT] {
        ctx.place = place;
        let mut direct = ctx.serve(&[])?;
        let mut via_use_tool = ctx.workbench(&proxy)?;
        via_use_tool.open(&names(1))?;
        let mut via_native = ctx.workbench(&dynamic)?;
        via_native.open(&names(1))?;
        let native = native_name(&mut via_native)?;
        let r = latency_rounds(
            ctx,
            &mut [
                (&mut direct, call_tail("echo", &echo())),
                (
                    &mut via_use_tool,
                    use_tool_tail("tb0", "s0", "echo", &echo()),
                ),
                (&mut via_native, call_tail(&native, &echo())),
            ],
        )?;
        ctx.info("direct call p50", "us", &r[0][0]);
        ctx.info("direct call p99", "us", &r[0][1]);
        ctx.info("  server CPU per call", "us", &r[0][2]);
        for (path, w) in [("use_tool", &r[1]), ("dynamic tool", &r[2])] {
            for (i, q, limit) in [(0, "p50", 25.0), (1, "p99", 60.0)] {
                let added = minus(&w[i], &r[0][i]);
                let what = format!("{path} added latency {q}");
                ctx.check(1, &what, "us", &added, le(limit));
            }
            ctx.info(&format!("  workbench CPU per call, {path}"), "us", &w[2]);
        }
        [direct, via_use_tool, via_native]
            .into_iter()
            .try_for_each(Proc::close)?;
    }
    Ok(())
}

/// Scaling: added use_tool latency against the number of open toolboxes.
pub fn latency_vs_toolboxes(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = ONE_CORE;
    let mut direct = ctx.serve(&[])?;
    for n in [1, 10, 50] {
        let config = ctx.config(&format!("toolboxes-{n}"), false, (n, 1), &[])?;
        let mut wb = ctx.workbench(&config)?;
        wb.open(&names(n))?;
        let tail = use_tool_tail(&format!("tb{}", n - 1), "s0", "echo", &echo());
        let paths = &mut [(&mut direct, call_tail("echo", &echo())), (&mut wb, tail)];
        let r = latency_rounds(ctx, paths)?;
        for (i, q) in [(0, "p50"), (1, "p99")] {
            let added = minus(&r[1][i], &r[0][i]);
            let what = format!("scaling: {n} toolboxes open, added {q}");
            ctx.info(&what, "us", &added);
        }
        wb.close()?;
    }
    direct.close()
}

/// `total` calls with `window` in flight, shared out over the lanes (one
/// process each, cycling through its request tails); every answer sends the
/// next request. Calls per second.
fn pipeline(
    lanes: &mut [(&mut Proc, Vec<String>)],
    total: usize,
    window: usize,
) -> io::Result<f64> {
    let n = lanes.len();
    let start = Barrier::new(n + 1);
    thread::scope(|s| {
        let mut handles = Vec::new();
        for (i, (p, tails)) in lanes.iter_mut().enumerate() {
            let share = |x: usize| x / n + usize::from(i < x % n);
            let (quota, window, start) = (share(total), share(window), &start);
            handles.push(s.spawn(move || lane(p, tails, (quota, window), start)));
        }
        start.wait();
        let began = Instant::now();
        for h in handles {
            h.join().expect("a lane panicked")?;
        }
        Ok(total as f64 / began.elapsed().as_secs_f64())
    })
}

fn lane(
    p: &mut Proc,
    tails: &[String],
    (quota, window): (usize, usize),
    start: &Barrier,
) -> io::Result<()> {
    let mut batch = Vec::new();
    let mut sent = 0;
    let mut next = |p: &mut Proc, batch: &mut Vec<u8>| {
        batch.extend(call_line(p.next_id(), &tails[sent % tails.len()]));
        sent += 1;
    };
    for _ in 0..window.min(quota) {
        next(p, &mut batch);
    }
    start.wait();
    p.send(&batch)?;
    batch.clear();
    for done in 1..=quota {
        if !is_ok(p.recv()?) {
            return Err(p.unexpected());
        }
        if done + window <= quota {
            next(p, &mut batch);
        }
        // Answers already buffered get their follow-ups in one write.
        if !batch.is_empty() && !p.has_buffered_line() {
            p.send(&batch)?;
            batch.clear();
        }
    }
    Ok(())
}

/// Rounds of pipelined calls spread over 5 servers: direct, then through a
/// fresh workbench (so that its VmHWM is this run's peak). Per round: calls/s
/// direct and via the workbench, their ratio, the workbench's peak RSS (MB)
/// and its CPU per call (µs).
fn rates(ctx: &Ctx, work: &[String], calls: usize, window: usize) -> io::Result<[Vec<f64>; 5]> {
    let config = ctx.config(&format!("five-{}", work.len()), false, (1, 5), work)?;
    rates_with(ctx, &config, work, calls, window)
}

/// `rates` through the workbench on `config` (a toolbox tb0 of five servers).
fn rates_with(
    ctx: &Ctx,
    config: &std::path::Path,
    work: &[String],
    calls: usize,
    window: usize,
) -> io::Result<[Vec<f64>; 5]> {
    let to_server = vec![call_tail("echo", &echo())];
    let via: Vec<_> = (0..5)
        .map(|s| use_tool_tail("tb0", &format!("s{s}"), "echo", &echo()))
        .collect();
    let mut r = <[Vec<f64>; 5]>::default();
    for _ in 0..ctx.n(3, 1) {
        let mut servers = (0..window.min(5))
            .map(|_| ctx.serve(work))
            .collect::<io::Result<Vec<_>>>()?;
        let mut lanes: Vec<_> = servers.iter_mut().map(|p| (p, to_server.clone())).collect();
        let direct = pipeline(&mut lanes, calls, window)?;
        servers.into_iter().try_for_each(Proc::close)?;
        let mut wb = ctx.workbench(config)?;
        wb.open(&names(1))?;
        let cpu = cpu_ns(wb.pid())?;
        let through = pipeline(&mut [(&mut wb, via.clone())], calls, window)?;
        r[4].push((cpu_ns(wb.pid())? - cpu) / 1e3 / calls as f64);
        r[3].push(status_bytes(wb.pid(), "VmHWM")? / MB);
        wb.close()?;
        r[0].push(direct);
        r[1].push(through);
        r[2].push(through / direct);
    }
    Ok(r)
}

/// 2 and 4: pipelined throughput against servers spending 50 µs per call;
/// the ceiling against zero-work servers.
pub fn throughput(ctx: &mut Ctx) -> io::Result<()> {
    let work = ["--spin".to_string(), ctx.spin.to_string()];
    for place in [ONE_CORE, SPLIT] {
        ctx.place = place;
        let r = rates(ctx, &work, ctx.n(100_000, 10_000), 64)?;
        let what = "throughput / direct, 64 in flight";
        ctx.check(2, what, "x", &r[2], ge(0.8));
        ctx.info("  via workbench, 50 us per call", "calls/s", &r[1]);
        ctx.info("  direct, 50 us per call", "calls/s", &r[0]);
        ctx.info("  workbench CPU per call", "us", &r[4]);
        ctx.check(4, "peak RSS in the 100,000-call run", "MB", &r[3], le(16.0));
        let r = rates(ctx, &[], ctx.n(50_000, 10_000), 64)?;
        ctx.info("ceiling: via workbench, zero work", "calls/s", &r[1]);
        ctx.info("ceiling: direct, zero work", "calls/s", &r[0]);
    }
    Ok(())
}

/// Scaling: throughput against calls in flight (50 µs per call).
pub fn throughput_vs_in_flight(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = SPLIT;
    let work = ["--spin".to_string(), ctx.spin.to_string()];
    for window in [1, 8, 64, 256] {
        let calls = ctx.n(10_000, 3_000) / if window == 1 { 3 } else { 1 };
        let r = rates(ctx, &work, calls, window)?;
        let what = format!("scaling: {window} in flight");
        ctx.info(&format!("{what}, via workbench"), "calls/s", &r[1]);
        ctx.info(&format!("{what}, direct"), "calls/s", &r[0]);
        ctx.info(&format!("{what}, ratio"), "x", &r[2]);
    }
    Ok(())
}

/// What an open does, done by the driver: starts `count` servers, then
/// handshakes and lists them (all pages) in parallel. The number of tools.
fn direct_open(ctx: &Ctx, count: usize, args: &[String]) -> io::Result<(Vec<Proc>, usize)> {
    let mut procs = (0..count)
        .map(|_| ctx.spawn_serve(args))
        .collect::<io::Result<Vec<_>>>()?;
    let ids = procs
        .iter_mut()
        .map(Proc::send_initialize)
        .collect::<io::Result<Vec<_>>>()?;
    let mut tools = 0;
    for (p, id) in procs.iter_mut().zip(ids) {
        p.initialized(id)?;
        let mut page = p.request("tools/list", json!({}))?;
        loop {
            tools += page["tools"].as_array().map_or(0, Vec::len);
            let Some(cursor) = page["nextCursor"].as_str() else {
                break;
            };
            page = p.request("tools/list", json!({ "cursor": cursor }))?;
        }
    }
    Ok((procs, tools))
}

/// 5: open_toolbox of 10 servers that each take 200 ms to initialize.
pub fn open_slow(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = SPLIT;
    let args = ["--init-delay-ms".to_string(), "200".to_string()];
    let config = ctx.config("ten-slow", false, (1, 10), &args)?;
    let (mut wb_ms, mut direct_ms) = (vec![], vec![]);
    for _ in 0..ctx.n(5, 2) {
        let mut wb = ctx.workbench(&config)?;
        wb_ms.push(ms(wb.open(&names(1))?));
        wb.close()?;
        let began = Instant::now();
        let (procs, _) = direct_open(ctx, 10, &args)?;
        direct_ms.push(ms(began.elapsed()));
        procs.into_iter().try_for_each(Proc::close)?;
    }
    let what = "open_toolbox, 10 servers x 200 ms start";
    ctx.check(5, what, "ms", &wb_ms, le(300.0));
    ctx.info("  direct: the driver starts the 10", "ms", &direct_ms);
    Ok(())
}

/// Scaling: open_toolbox time and result size against tools per toolbox.
pub fn open_vs_tools(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = SPLIT;
    for tools in [10, 1000, 10_000] {
        let args = ["--tools", &tools.to_string(), "--page", "100"].map(String::from);
        let config = ctx.config(&format!("tools-{tools}"), false, (1, 1), &args)?;
        let (mut wb_ms, mut direct_ms, mut kib) = (vec![], vec![], vec![]);
        for _ in 0..ctx.n(3, 1) {
            let mut wb = ctx.workbench(&config)?;
            wb_ms.push(ms(wb.open(&names(1))?));
            kib.push(wb.last_line().len() as f64 / 1024.0);
            let open: Value = serde_json::from_slice(wb.last_line())?;
            let listed = open["result"]["structuredContent"]["tools"]
                .as_array()
                .map_or(0, Vec::len);
            wb.close()?;
            let began = Instant::now();
            let (procs, direct) = direct_open(ctx, 1, &args)?;
            direct_ms.push(ms(began.elapsed()));
            procs.into_iter().try_for_each(Proc::close)?;
            if (listed, direct) != (tools, tools) {
                let what = format!("listed {listed} and {direct} of {tools} tools");
                return Err(io::Error::other(what));
            }
        }
        let what = format!("scaling: {tools} tools (pages of 100)");
        ctx.info(&format!("{what}, open_toolbox"), "ms", &wb_ms);
        ctx.info(&format!("{what}, direct"), "ms", &direct_ms);
        ctx.info(&format!("{what}, open result"), "KiB", &kib);
    }
    Ok(())
}

/// One call answered by a result of at least `min_len` bytes; ms.
fn timed_call(p: &mut Proc, tail: &str, min_len: usize) -> io::Result<f64> {
    let line = call_line(p.next_id(), tail);
    let began = Instant::now();
    p.send(&line)?;
    let reply = p.recv()?;
    let elapsed = ms(began.elapsed());
    if is_ok(reply) && reply.len() >= min_len {
        Ok(elapsed)
    } else {
        Err(p.unexpected())
    }
}

/// 6: 16 MiB results through the workbench against direct; a 64 MiB line.
pub fn big_results(ctx: &mut Ctx) -> io::Result<()> {
    let config = ctx.config("one", false, (1, 1), &[])?;
    let blob = |bytes: usize| {
        let args = json!({ "bytes": bytes });
        (
            call_tail("blob", &args),
            use_tool_tail("tb0", "s0", "blob", &args),
        )
    };
    let (big, huge) = (16 << 20, 64 << 20);
    for place in [ONE_CORE, SPLIT] {
        ctx.place = place;
        let mut direct = ctx.serve(&[])?;
        let mut wb = ctx.workbench(&config)?;
        wb.open(&names(1))?;
        let (to_server, via) = blob(big);
        timed_call(&mut direct, &to_server, big)?; // warm-up
        timed_call(&mut wb, &via, big)?;
        let (cpu, faults) = (cpu_ns(wb.pid())?, proc_stat(wb.pid(), 10)?);
        let (mut d, mut w) = (vec![], vec![]);
        for _ in 0..ctx.n(5, 2) {
            d.push(timed_call(&mut direct, &to_server, big)?);
            w.push(timed_call(&mut wb, &via, big)?);
        }
        let cpu = (cpu_ns(wb.pid())? - cpu) / 1e6 / w.len() as f64;
        let faults = (proc_stat(wb.pid(), 10)? - faults) as f64 / w.len() as f64;
        let ratio: Vec<f64> = w.iter().zip(&d).map(|(w, d)| w / d).collect();
        let what = "16 MiB result, time / direct";
        ctx.check(6, what, "x", &ratio, le(1.5));
        ctx.info("  via workbench", "ms", &w);
        ctx.info("  direct", "ms", &d);
        ctx.info("  workbench CPU per 16 MiB result", "ms", &[cpu]);
        ctx.info("  workbench page faults per 16 MiB result", "", &[faults]);
        let peak = status_bytes(wb.pid(), "VmHWM")? / MIB;
        let what = "peak RSS passing 16 MiB results";
        ctx.check(6, what, "MiB", &[peak], le(48.0));
        let (to_server, via) = blob(huge);
        let direct_ms = timed_call(&mut direct, &to_server, huge)?;
        let passed = timed_call(&mut wb, &via, huge);
        let alive = wb.request("ping", json!({})).is_ok();
        let ok = f64::from(u8::from(passed.is_ok() && alive));
        ctx.check(6, "64 MiB line passes (1 = yes)", "", &[ok], ge(1.0));
        let passed_ms = *passed.as_ref().unwrap_or(&f64::NAN);
        ctx.info("  64 MiB via workbench", "ms", &[passed_ms]);
        ctx.info("  64 MiB direct", "ms", &[direct_ms]);
        let peak = status_bytes(wb.pid(), "VmHWM")? / MIB;
        ctx.info("  peak RSS after 64 MiB", "MiB", &[peak]);
        wb.close()?;
        direct.close()?;
    }
    Ok(())
}

/// 4 and 7: RSS with 10 toolboxes of 5 servers open; CPU used while idle.
pub fn ten_toolboxes(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = SPLIT;
    let config = ctx.config("ten-by-five", false, (10, 5), &[])?;
    let idle = Duration::from_secs(if ctx.quick { 2 } else { 10 });
    let (mut rss, mut ticks, mut ns) = (vec![], vec![], vec![]);
    for _ in 0..ctx.n(3, 1) {
        let mut wb = ctx.workbench(&config)?;
        wb.open(&names(10))?;
        thread::sleep(Duration::from_millis(500));
        let pid = wb.pid();
        rss.push(status_bytes(pid, "VmRSS")? / MB);
        let cpu_ticks = || Ok::<_, io::Error>(proc_stat(pid, 14)? + proc_stat(pid, 15)?);
        let (t0, n0) = (cpu_ticks()?, cpu_ns(pid)?);
        thread::sleep(idle);
        ticks.push((cpu_ticks()? - t0) as f64 * 1000.0 / ctx.clock_ticks);
        ns.push((cpu_ns(pid)? - n0) / 1e6);
        wb.close()?;
    }
    let what = "RSS, 10 toolboxes x 5 servers open";
    ctx.check(4, what, "MB", &rss, le(12.0));
    let what = format!("idle CPU in {} s, utime+stime", idle.as_secs());
    ctx.check(7, &what, "ms", &ticks, le(10.0));
    ctx.info("  the same from schedstat (ns resolution)", "ms", &ns);
    Ok(())
}

/// §8: a session of a shared fleet (front, fleet, server) against a
/// workbench of its own, in one run: added latency per call (the shared
/// path's p50 within 2x of the unshared one's) and pipelined throughput.
/// The fleet is the front's child, so it runs on the front's CPUs.
pub fn shared(ctx: &mut Ctx) -> io::Result<()> {
    let share = |path: std::path::PathBuf| -> io::Result<std::path::PathBuf> {
        let mut config: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        config["shareServers"] = json!(true);
        config["shareLingerMs"] = json!(200);
        std::fs::write(&path, config.to_string())?;
        Ok(path)
    };
    let own = ctx.config("one", false, (1, 1), &[])?;
    let shared = share(ctx.config("one-shared", false, (1, 1), &[])?)?;
    for place in [ONE_CORE, SPLIT] {
        ctx.place = place;
        let mut direct = ctx.serve(&[])?;
        let mut alone = ctx.workbench(&own)?;
        alone.open(&names(1))?;
        let mut session = ctx.workbench(&shared)?;
        session.open(&names(1))?;
        let tail = use_tool_tail("tb0", "s0", "echo", &echo());
        let r = latency_rounds(
            ctx,
            &mut [
                (&mut direct, call_tail("echo", &echo())),
                (&mut alone, tail.clone()),
                (&mut session, tail),
            ],
        )?;
        let unshared = minus(&r[1][0], &r[0][0]);
        let through_fleet = minus(&r[2][0], &r[0][0]);
        ctx.info("use_tool added latency p50, own servers", "us", &unshared);
        ctx.info(
            "use_tool added latency p50, shared fleet",
            "us",
            &through_fleet,
        );
        let ratio: Vec<f64> = through_fleet
            .iter()
            .zip(&unshared)
            .map(|(s, u)| s / u)
            .collect();
        ctx.check(1, "shared / own added latency p50", "x", &ratio, le(2.0));
        [direct, alone, session]
            .into_iter()
            .try_for_each(Proc::close)?;
        let work = ["--spin".to_string(), ctx.spin.to_string()];
        let config = share(ctx.config("five-shared", false, (1, 5), &work)?)?;
        let r = rates_with(ctx, &config, &work, ctx.n(50_000, 10_000), 64)?;
        ctx.check(
            2,
            "shared fleet: throughput / direct, 64 in flight",
            "x",
            &r[2],
            ge(0.85),
        );
    }
    Ok(())
}

/// The remote row: the added latency of a `use_tool` call to a Streamable
/// HTTP server on loopback (JSON answers, keep-alive), against the driver
/// calling the same server directly over HTTP. Rounds alternate blocks of
/// 50 calls between the two paths. p50 and p90, as figures without a target.
pub fn remote(ctx: &mut Ctx) -> io::Result<()> {
    for place in [ONE_CORE, SPLIT] {
        ctx.place = place;
        let (server, port) = ctx.serve_http(&[])?;
        let mut direct = http::Client::connect(port)?;
        direct.initialize()?;
        let config = ctx.remote_config("remote", &format!("http://127.0.0.1:{port}/mcp"))?;
        let mut wb = ctx.workbench(&config)?;
        wb.open(&names(1))?;
        let tail = use_tool_tail("tb0", "s0", "echo", &echo());
        let (n, block) = (ctx.n(2000, 300), 50);
        let mut direct_calls = |times: &mut Vec<f64>, count: usize| -> io::Result<()> {
            for id in 0..count {
                let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": echo()}});
                let body = body.to_string();
                let began = Instant::now();
                let reply = direct.post(body.as_bytes())?;
                times.push(began.elapsed().as_secs_f64() * 1e6);
                if !is_ok(&reply) {
                    return Err(io::Error::other("the direct HTTP call failed"));
                }
            }
            Ok(())
        };
        direct_calls(&mut vec![], 300)?; // warm-up
        sequential(&mut wb, &tail, 300, &mut vec![])?;
        let (mut d50, mut d90, mut w50, mut w90) = (vec![], vec![], vec![], vec![]);
        for _ in 0..ctx.n(7, 3) {
            let (mut d, mut w) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for _ in 0..n / block {
                direct_calls(&mut d, block)?;
                sequential(&mut wb, &tail, block, &mut w)?;
            }
            for (times, p50, p90) in [(&mut d, &mut d50, &mut d90), (&mut w, &mut w50, &mut w90)] {
                times.sort_by(f64::total_cmp);
                let at = |q: f64| {
                    times[((q * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1]
                };
                p50.push(at(0.50));
                p90.push(at(0.90));
            }
        }
        ctx.info("remote: direct HTTP call p50", "us", &d50);
        ctx.info("remote: direct HTTP call p90", "us", &d90);
        ctx.info(
            "remote: use_tool added latency p50",
            "us",
            &minus(&w50, &d50),
        );
        ctx.info(
            "remote: use_tool added latency p90",
            "us",
            &minus(&w90, &d90),
        );
        wb.close()?;
        server.close()?;
    }
    Ok(())
}
