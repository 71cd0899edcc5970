// The one translation unit that compiles Asio's implementation
// (BOOST_ASIO_SEPARATE_COMPILATION is defined for the whole build), so the other
// files that use Asio parse its headers without instantiating its internals.
#include <boost/asio/impl/src.hpp>
