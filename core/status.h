#pragma once
// Status and Result<T>: how every module boundary reports failure.
//
// In the spirit of leveldb's Status and absl::Status: named factories, ok(), code(),
// message(). Result<T>'s API is a subset of std::expected (has_value/ok, operator*,
// operator->, error()/status()) so it can become an alias under C++23.
// Likely failures (a provider 5xx, a malformed body, SQLITE_BUSY) travel as values;
// exceptions stay inside the adapters that talk to throwing libraries.

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace loopwarden {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad input: configuration, request, body
  kNotFound,           // the thing asked for does not exist
  kAlreadyExists,      // a create collided with an existing object
  kFailedPrecondition, // the system is not in a state that allows the operation
  kPermissionDenied,   // authenticated but not allowed
  kUnauthenticated,    // no or bad credentials
  kResourceExhausted,  // rate limits, quotas, caps, a full disk
  kUnavailable,        // transient: retrying may help
  kDeadlineExceeded,   // a timeout
  kCancelled,          // the caller gave up (shutdown)
  kDataLoss,           // damaged or unreadable stored data
  kUnimplemented,      // not built (yet)
  kInternal,           // an invariant broke
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: poll_interval: ..." — for logs and CLI output.
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status Unauthenticated(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Holds either a T or a non-OK Status. Constructing from an OK Status is a bug.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  bool has_value() const { return ok(); }
  explicit operator bool() const { return ok(); }

  // The error, or OK when a value is held. A reference, so `const auto& m =
  // r.status().message()` is safe for as long as `r` lives.
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  const Status& error() const { return std::get<Status>(v_); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace loopwarden

// Returns early from a function returning Status or Result<...> when `expr` fails.
#define LW_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::loopwarden::Status lw_status_ = (expr);         \
    if (!lw_status_.ok()) return lw_status_;          \
  } while (false)

#define LW_CONCAT_INNER(a, b) a##b
#define LW_CONCAT(a, b) LW_CONCAT_INNER(a, b)
// LW_ASSIGN_OR_RETURN(auto x, F()) declares x from F()'s value or returns its error.
#define LW_ASSIGN_OR_RETURN(decl, expr) \
  LW_ASSIGN_OR_RETURN_IMPL(LW_CONCAT(lw_result_, __LINE__), decl, expr)
#define LW_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  decl = std::move(tmp).value()
