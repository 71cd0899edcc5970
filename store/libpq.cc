#include "store/libpq.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace loopwarden::store::pg {
namespace {

const Libpq* loaded = nullptr;

template <class F>
bool Bind(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (fn == nullptr && missing.empty()) missing = name;
  return fn != nullptr;
}

}  // namespace

Result<std::unique_ptr<const Libpq>> LoadLibpqFrom(const char* soname) {
  void* lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return FailedPrecondition(std::string("a PostgreSQL store needs libpq (") + soname +
                              "), which could not be loaded: " + (why ? why : "no reason given") +
                              "; install it (Debian: apt-get install libpq5)");
  }
  auto api = std::make_unique<Libpq>();
  std::string missing;
#define LW_PQ_BIND(f) Bind(lib, #f, api->f, missing)
  LW_PQ_BIND(PQconnectdbParams);
  LW_PQ_BIND(PQstatus);
  LW_PQ_BIND(PQerrorMessage);
  LW_PQ_BIND(PQfinish);
  LW_PQ_BIND(PQreset);
  LW_PQ_BIND(PQsetNoticeProcessor);
  LW_PQ_BIND(PQexec);
  LW_PQ_BIND(PQexecParams);
  LW_PQ_BIND(PQresultStatus);
  LW_PQ_BIND(PQresultErrorField);
  LW_PQ_BIND(PQresultErrorMessage);
  LW_PQ_BIND(PQclear);
  LW_PQ_BIND(PQntuples);
  LW_PQ_BIND(PQnfields);
  LW_PQ_BIND(PQfname);
  LW_PQ_BIND(PQgetvalue);
  LW_PQ_BIND(PQgetlength);
  LW_PQ_BIND(PQgetisnull);
  LW_PQ_BIND(PQcmdTuples);
#undef LW_PQ_BIND
  if (!missing.empty()) {
    ::dlclose(lib);
    return FailedPrecondition(std::string("the libpq loaded from ") + soname + " has no " + missing +
                              "; a PostgreSQL store needs libpq 10 or later");
  }
  // The library stays loaded for the life of the process, like a linked one.
  return std::unique_ptr<const Libpq>(std::move(api));
}

Result<const Libpq*> LoadLibpq() {
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (loaded == nullptr) {
    LW_ASSIGN_OR_RETURN(std::unique_ptr<const Libpq> api, LoadLibpqFrom("libpq.so.5"));
    loaded = api.release();  // never freed: a connection may be closed during exit
  }
  return loaded;
}

const Libpq& Pq() { return *loaded; }

}  // namespace loopwarden::store::pg
