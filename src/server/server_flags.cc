// Startup flags that the server library reads (CONFIG GET, INFO, SELECT's range) besides
// main(), so they are defined here rather than in damselfly_main.cc: a program that links
// the library without main() (the in-process tests) gets them too.
#include <gflags/gflags.h>

DEFINE_uint32(port, 6379, "TCP port for RESP clients");
DEFINE_string(bind, "",
              "Addresses to listen on, separated by spaces or commas (empty: every IPv4 and "
              "IPv6 address)");
DEFINE_uint32(dbnum, 16, "Number of databases (SELECT 0 .. dbnum-1)");
DEFINE_int32(tcp_backlog, 511, "Listen backlog");
