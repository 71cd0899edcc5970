#pragma once
// libpq, loaded when the first PostgreSQL connection is made rather than linked.
//
// Linked, libpq brought about twenty libraries into every process (GnuTLS, Kerberos,
// LDAP, SASL, p11-kit and theirs), about 3 MB resident, though most installations use
// the SQLite store and never call it. Only store/postgres*.cc and leader_lease.cc
// include this; they call libpq through Pq() once Conn::Connect has loaded it.

#include <libpq-fe.h>

#include <memory>

#include "core/status.h"

namespace loopwarden::store::pg {

// The libpq functions the store calls, by their libpq names.
struct Libpq {
  decltype(&::PQconnectdbParams) PQconnectdbParams;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQreset) PQreset;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQclear) PQclear;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQnfields) PQnfields;
  decltype(&::PQfname) PQfname;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQcmdTuples) PQcmdTuples;
};

// libpq.so.5, loaded once per process (later calls return the same); kFailedPrecondition
// naming the library and what the loader said when it is missing or lacks a function.
Result<const Libpq*> LoadLibpq();
// The same from any library, each call anew (for tests: a missing one, one without libpq's
// functions).
Result<std::unique_ptr<const Libpq>> LoadLibpqFrom(const char* soname);
// The library LoadLibpq loaded: only after it succeeded (every Conn exists after it).
const Libpq& Pq();

}  // namespace loopwarden::store::pg
