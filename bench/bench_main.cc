// lw-bench [scale|latency|fleet-week|forecast-week|ledger|all] [--build DIR] [--out DIR]
//          [--sizes 1000,10000] [--marks N] [--latency-scale S] [--week-scale S]
//          [--forecast-copies K] [--forecast-seed N] [--forecast-scale S]
// Writes DIR/results.json and DIR/results.md (default bench/results).
// lw-bench merge OUT_DIR FILE... combines results of separate runs into one table.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench/bench.h"
#include "core/log.h"
#include "core/time.h"

using namespace loopwarden;

int Run(int argc, char** argv);

namespace {
struct WorkDirRemover {
  std::string path;
  ~WorkDirRemover() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "lw-bench: " << e.what() << "\n";
    return 1;
  }
}

int Run(int argc, char** argv) {
  Logger::Default().set_output(&std::cerr);
  Logger::Default().set_level(LogLevel::kWarn);
  bench::Options o;
  std::string what = argc > 1 ? argv[1] : "all";
  if (what == "merge") {
    // lw-bench merge OUT_DIR RESULTS.json...: one table from separate runs.
    if (argc < 4) {
      std::cerr << "usage: lw-bench merge OUT_DIR results.json...\n";
      return 2;
    }
    boost::json::object merged;
    for (int i = 3; i < argc; ++i) {
      std::ifstream in(argv[i]);
      std::stringstream text;
      text << in.rdbuf();
      boost::system::error_code ec;
      boost::json::value v = boost::json::parse(text.str(), ec);
      if (ec || !v.is_object()) {
        std::cerr << "lw-bench: " << argv[i] << " is not a results file\n";
        return 1;
      }
      for (const auto& [k, x] : v.as_object()) merged[k] = x;
    }
    const std::string dir = argv[2];
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/results.json") << boost::json::serialize(merged) << "\n";
    std::ofstream(dir + "/results.md") << bench::Markdown(merged);
    std::cout << bench::Markdown(merged);
    return 0;
  }
  if (what != "scale" && what != "latency" && what != "fleet-week" && what != "forecast-week" && what != "ledger" &&
      what != "all" && what != "scale-one") {
    std::cerr << "usage: lw-bench [scale|latency|fleet-week|forecast-week|ledger|all] [--build DIR] [--out DIR]\n"
                 "                [--sizes 1000,10000,100000] [--marks N] [--latency-scale S] [--week-scale S]\n"
                 "                [--forecast-copies K] [--forecast-seed N] [--forecast-scale S]\n"
                 "       lw-bench merge OUT_DIR results.json...\n";
    return what == "--help" || what == "-h" ? 0 : 2;
  }
  std::string out = "bench/results";
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--build") o.build_dir = v;
    else if (k == "--out") out = v;
    else if (k == "--marks") o.marks = std::stoi(v);
    else if (k == "--latency-scale") o.latency_scale = std::stod(v);
    else if (k == "--week-scale") o.week_scale = std::stod(v);
    else if (k == "--forecast-copies") o.forecast_copies = std::stoi(v);
    else if (k == "--forecast-seed") o.forecast_seed = std::stoi(v);
    else if (k == "--forecast-scale") o.forecast_scale = std::stod(v);
    else if (k == "--sizes") {
      o.sizes.clear();
      for (size_t p = 0; p < v.size();) {
        size_t c = v.find(',', p);
        o.sizes.push_back(std::stoi(v.substr(p, c - p)));
        p = c == std::string::npos ? v.size() : c + 1;
      }
    } else {
      std::cerr << "lw-bench: unknown flag " << k << "\n";
      return 2;
    }
  }
  o.work_dir = (std::filesystem::temp_directory_path() / ("lw-bench-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(o.work_dir);
  // Removed on every way out: a scale-one child's database alone is 250 MB at 100k, and
  // leaving one per run filled the disk the build shares.
  WorkDirRemover remover{o.work_dir};
  if (what == "scale-one") {  // the child of `scale`: one size, JSON on stdout
    std::cout << boost::json::serialize(bench::MeasureScale(o, o.sizes.at(0))) << "\n";
    return 0;
  }
  boost::json::object results;
  results["machine"] = bench::MachineDescription();
  results["date"] = FormatTimeSeconds(std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now()));
  if (what == "scale" || what == "all") results["scale"] = bench::RunScale(o);
  if (what == "latency" || what == "all") results["latency"] = bench::RunLatency(o);
  if (what == "fleet-week" || what == "all") results["fleet_week"] = bench::RunFleetWeek(o);
  if (what == "forecast-week" || what == "all") results["forecast_week"] = bench::RunForecastWeek(o);
  if (what == "ledger" || what == "all") results["ledger"] = bench::RunLedger(o);
  std::filesystem::create_directories(out);
  std::ofstream(out + "/results.json") << boost::json::serialize(results) << "\n";
  const std::string md = bench::Markdown(results);
  std::ofstream(out + "/results.md") << md;
  std::cout << md;
  return 0;
}
