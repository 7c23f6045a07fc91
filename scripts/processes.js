// Small process checks shared by the start script and the PostgreSQL watchdog.

/** Whether a process with this id exists (EPERM: it exists, but belongs to another user). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

module.exports = { alive };
