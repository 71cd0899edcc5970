# What `cmake --install` lays out, and the .deb CPack builds from the same rules.
#
# The unit and the configuration directory follow the prefix given at install time, not
# the one configured: `cmake --install build --prefix /opt/lw` gives a unit that runs
# /opt/lw/bin/loopwarden with /opt/lw/etc/loopwarden, and writes nothing outside
# /opt/lw. Only the /usr prefix (the default, and the package's) puts the configuration
# in /etc, as the FHS wants.
install(TARGETS loopwarden RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES deploy/prometheus/loopwarden.rules.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/loopwarden/prometheus)
install(DIRECTORY deploy/grafana/ DESTINATION ${CMAKE_INSTALL_DATADIR}/loopwarden/grafana)
install(FILES deploy/man/loopwarden.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES deploy/completion/loopwarden.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME loopwarden)
set(LOOPWARDEN_INSTALL_SOURCE ${CMAKE_CURRENT_SOURCE_DIR})
set(LOOPWARDEN_INSTALL_BINARY ${CMAKE_CURRENT_BINARY_DIR})
install(CODE "set(LOOPWARDEN_INSTALL_SOURCE \"${LOOPWARDEN_INSTALL_SOURCE}\")
              set(LOOPWARDEN_INSTALL_BINARY \"${LOOPWARDEN_INSTALL_BINARY}\")
              set(LOOPWARDEN_BINDIR \"${CMAKE_INSTALL_BINDIR}\")")
install(CODE [[
  # Evaluated at install time, with the prefix `--prefix` (or CPack) gave.
  set(_prefix "${CMAKE_INSTALL_PREFIX}")
  if(_prefix STREQUAL "/usr")
    set(_etc "/etc")
  else()
    set(_etc "${_prefix}/etc")
  endif()
  file(READ "${LOOPWARDEN_INSTALL_SOURCE}/deploy/systemd/loopwarden.service" _unit)
  string(REPLACE "/usr/bin/" "${_prefix}/${LOOPWARDEN_BINDIR}/" _unit "${_unit}")
  string(REPLACE "/etc/loopwarden" "${_etc}/loopwarden" _unit "${_unit}")
  # One file per destination: `cmake --install` and cpack may run at once (tests do).
  string(MD5 _where "$ENV{DESTDIR}${_prefix}")
  set(_generated "${LOOPWARDEN_INSTALL_BINARY}/generated/install/${_where}/loopwarden.service")
  file(WRITE "${_generated}" "${_unit}")
  file(INSTALL DESTINATION "${_prefix}/lib/systemd/system" TYPE FILE FILES "${_generated}")
  file(INSTALL DESTINATION "${_etc}/loopwarden" TYPE FILE
       FILES "${LOOPWARDEN_INSTALL_SOURCE}/deploy/systemd/loopwarden.yaml")
]])

# cpack -G DEB: one package with the binary, the unit (installed, not enabled or
# started: the shipped configuration is inert and names credentials that must exist
# first), the configuration as a conffile, rules, dashboards, man page and completion.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME loopwarden)
set(CPACK_PACKAGE_VENDOR loopwarden)
set(CPACK_PACKAGE_CONTACT "loopwarden maintainers <maintainers@loopwarden.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "cost governance for ML training resources (Baseten, Fireworks)")
set(CPACK_PACKAGE_INSTALL_DIRECTORY /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Stage with DESTDIR so the install code above sees the real prefix (/usr), not the
# staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libpq is loaded only for a PostgreSQL state_path (store/libpq.h), so shlibdeps does not
# see it: recommended, as most installations keep the SQLite default.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_SOURCE_DIR}/deploy/debian/conffiles
    ${CMAKE_CURRENT_SOURCE_DIR}/deploy/debian/postinst
    ${CMAKE_CURRENT_SOURCE_DIR}/deploy/debian/prerm
    ${CMAKE_CURRENT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The build keeps debug info (RelWithDebInfo); the package does not need it.
set(CPACK_STRIP_FILES ON)
include(CPack)
