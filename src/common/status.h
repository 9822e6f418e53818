// Status and Result<T>: errors as values across every module boundary.
// Thread-safety: immutable values; safe to copy between threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace strata {

/// Error categories. Each maps to one REST error code (PROTOCOL.md §0).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,      // bad input: names the field and the limit (HTTP 400)
  kNotFound,             // table / index / file missing (HTTP 404)
  kAlreadyExists,        // name taken (put_if_absent, create table)
  kIOError,              // filesystem or object-store failure
  kCorruption,           // stored or received bytes fail validation
  kNotSupported,         // valid input Strata does not handle (yet)
  kPayloadTooLarge,      // request exceeds a size limit (HTTP 413)
  kFenced,               // another writer owns the shard (HTTP 409)
  kBackpressure,         // retryable: writes stalled (HTTP 503)
  kWriterPoisoned,       // persistent storage failure (HTTP 503)
  kInsufficientStorage,  // free space below the write floor; retryable (HTTP 507)
  kTimeout,              // deadline passed (HTTP 504)
  kInternal,             // bug: an invariant did not hold (HTTP 500)
  kCancelled,            // background work abandoned (stop, or its definition dropped; HTTP 503)
};

/// Name of a code, e.g. "InvalidArgument".
const char* StatusCodeName(StatusCode code);

/// Outcome of an operation: OK, or a code plus a human sentence naming the field and limit.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status Invalid(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
  static Status PayloadTooLarge(std::string m) {
    return {StatusCode::kPayloadTooLarge, std::move(m)};
  }
  static Status Fenced(std::string m) { return {StatusCode::kFenced, std::move(m)}; }
  static Status Backpressure(std::string m) { return {StatusCode::kBackpressure, std::move(m)}; }
  static Status WriterPoisoned(std::string m) {
    return {StatusCode::kWriterPoisoned, std::move(m)};
  }
  static Status InsufficientStorage(std::string m) {
    return {StatusCode::kInsufficientStorage, std::move(m)};
  }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "InvalidArgument: message", or "OK".
  std::string ToString() const;
  /// A copy with `prefix + ": "` put before the message; OK stays OK.
  Status WithContext(const std::string& prefix) const;

  bool IsInvalid() const { return code_ == StatusCode::kInvalidArgument; }
  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsAlreadyExists() const { return code_ == StatusCode::kAlreadyExists; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// A value of T or an error Status (never an OK Status).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  /// The value, or `fallback` on error.
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace strata

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function when `expr` is not OK.
#define STRATA_RETURN_IF_ERROR(expr) \
  do {                               \
    ::strata::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)

#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

/// `lhs = value of rexpr`, or return its error Status.
#define STRATA_ASSIGN_OR_RETURN(lhs, rexpr) \
  STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_CONCAT(_res_, __LINE__), lhs, rexpr)
