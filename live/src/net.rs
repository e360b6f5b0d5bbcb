//! The TCP calls of the live server and its client, each behind a small safe function:
//! a listener on a loopback address, a connection bound to a chosen loopback source
//! address before it connects (the standard library cannot bind before connecting), a
//! non-blocking accept, and the process's peak resident set.
//!
//! Every address here is a loopback one (127.0.0.0/8): the TCP mode sends no traffic
//! anywhere else, and [`loopback`] refuses any other.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The address the server listens on.
pub const SERVER_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

/// Connections per source address: below the ephemeral range's 28,232 ports
/// (32768-60999 by default), so that one address never runs out.
pub const CONNECTIONS_PER_SOURCE: u64 = 20_000;

/// The backlog asked of `listen` (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: libc::c_int = 65_535;

/// The first source port a connection binds to explicitly ([`source_port`]).
const FIRST_SOURCE_PORT: u64 = 10_000;

/// How many source addresses `connections` need: 127.0.0.2, 127.0.0.3, ...
pub fn sources_for(connections: u64) -> u64 {
    connections.div_ceil(CONNECTIONS_PER_SOURCE).max(1)
}

/// The source address of connection `index` among `sources`: 127.0.0.(2 + index % sources).
pub fn source_of(index: u64, sources: u64) -> Ipv4Addr {
    let host = 2 + index % sources;
    Ipv4Addr::new(127, 0, (host >> 8) as u8, host as u8)
}

/// The source port of connection `index` among `sources`: each address's connections take
/// consecutive ports from 10,000. Binding the port explicitly spares the kernel its search
/// for a free one at each connect, a scan of the ephemeral range that grows with the
/// connections already open from the address.
pub fn source_port(index: u64, sources: u64) -> u16 {
    (FIRST_SOURCE_PORT + index / sources) as u16
}

/// `address` if it is a loopback address, else the refusal.
pub fn loopback(address: Ipv4Addr) -> io::Result<Ipv4Addr> {
    if address.is_loopback() {
        Ok(address)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{address} is not a loopback address: the TCP mode stays on 127.0.0.0/8"),
        ))
    }
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn sockaddr(address: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: address.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*address.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn tcp_socket(flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: no pointers; a returned descriptor is ours to own.
    let fd = check(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | flags,
            0,
        )
    })?;
    // SAFETY: `fd` was just returned open and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: RawFd, address: SocketAddrV4) -> io::Result<()> {
    let addr = sockaddr(address);
    // SAFETY: `addr` is a valid sockaddr_in of the size given.
    check(unsafe {
        libc::bind(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

fn set_flag(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: `one` is a valid c_int option value of the size given.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// A non-blocking listener on `127.0.0.1:port` (0: any free port) with a large backlog.
pub fn listen(port: u16) -> io::Result<TcpListener> {
    let fd = tcp_socket(libc::SOCK_NONBLOCK)?;
    set_flag(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR)?;
    bind(fd.as_raw_fd(), SocketAddrV4::new(SERVER_ADDRESS, port))?;
    // SAFETY: no pointers.
    check(unsafe { libc::listen(fd.as_raw_fd(), BACKLOG) })?;
    Ok(TcpListener::from(fd))
}

/// Accepts one connection, non-blocking and close-on-exec; `None` when none is waiting.
pub fn accept(listener: &TcpListener) -> io::Result<Option<TcpStream>> {
    loop {
        // SAFETY: null address pointers are allowed (the peer is not asked for).
        let rc = unsafe {
            libc::accept4(
                listener.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        if rc >= 0 {
            // SAFETY: `rc` was just returned open and is owned by nobody else.
            return Ok(Some(TcpStream::from(unsafe { OwnedFd::from_raw_fd(rc) })));
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted => continue,
            _ => return Err(error),
        }
    }
}

/// A blocking connection from `source` to `server`, with Nagle off so that each keepalive
/// goes out when it is written. From `source`'s port `port` if it is free, else from one
/// the kernel chooses.
pub fn connect_from(source: SocketAddrV4, server: SocketAddrV4) -> io::Result<TcpStream> {
    loopback(*source.ip())?;
    loopback(*server.ip())?;
    let fd = tcp_socket(0)?;
    set_flag(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR)?;
    if bind(fd.as_raw_fd(), source).is_err() {
        // Taken (another program's socket): the kernel chooses, at connect time.
        set_flag(
            fd.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
        )?;
        bind(fd.as_raw_fd(), SocketAddrV4::new(*source.ip(), 0))?;
    }
    let addr = sockaddr(server);
    loop {
        // SAFETY: `addr` is a valid sockaddr_in of the size given.
        let rc = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            break;
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    let stream = TcpStream::from(fd);
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// The process's peak resident set (`VmHWM` of `/proc/self/status`), in bytes; 0 if
/// unreadable.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .map_or(0, |kib: u64| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn connections_spread_over_enough_loopback_sources() {
        assert_eq!(sources_for(1), 1);
        assert_eq!(sources_for(20_000), 1);
        assert_eq!(sources_for(100_000), 5);
        assert_eq!(source_of(0, 5), Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(source_of(6, 5), Ipv4Addr::new(127, 0, 0, 3));
        assert_eq!(source_of(300, 400), Ipv4Addr::new(127, 0, 1, 46));
        // Each address's connections take consecutive ports.
        assert_eq!(source_port(0, 5), 10_000);
        assert_eq!(source_port(6, 5), 10_001);
        assert_eq!(source_port(99_999, 5), 29_999);
        assert!(loopback(Ipv4Addr::new(10, 0, 0, 1)).is_err());
    }

    #[test]
    fn a_connection_from_a_chosen_source_reaches_the_listener() {
        let listener = listen(0).unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = SocketAddrV4::new(SERVER_ADDRESS, port);
        let source = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 3), 0);
        let mut client = connect_from(source, server).unwrap();
        client.write_all(b"ping").unwrap();
        let accepted = loop {
            if let Some(stream) = accept(&listener).unwrap() {
                break stream;
            }
            std::thread::yield_now();
        };
        assert_eq!(
            accepted.peer_addr().unwrap().ip(),
            std::net::IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3))
        );
        accepted.set_nonblocking(false).unwrap();
        let mut got = [0u8; 4];
        (&accepted).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        assert!(peak_rss_bytes() > 0);
    }
}
