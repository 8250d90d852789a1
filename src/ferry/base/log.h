// Logging: spdlog, configured once by the app layer (text or JSON lines, level). Lower layers log
// through these macros so they never configure sinks themselves. Never log secrets: config values
// marked secret are redacted before they reach a message (config/).
#pragma once

#include <spdlog/spdlog.h>

#define FERRY_LOG_TRACE(...) SPDLOG_TRACE(__VA_ARGS__)
#define FERRY_LOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)
#define FERRY_LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define FERRY_LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define FERRY_LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
